"""Single-file and hierarchical storage formats: safetensors, HDF5 (``h5py``), Zarr (``zarr``).

Each is an optional extra (``pip install 'tensorclass[formats]'``), imported when used.
:mod:`.layout` is the JSON description of a tree that all three store next to the tensors.
"""
