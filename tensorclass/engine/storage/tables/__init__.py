"""Tables: one row per batch element, one column per leaf (pandas, Arrow, Parquet, CSV, JSON).

- :mod:`.columns` turns an instance with a 1-D batch into named columns and named columns
  back into an instance of a chosen class (nested keys joined by a separator).
- :mod:`.frames` reads and writes pandas data frames, CSV and JSON.
- :mod:`.arrow` reads and writes Arrow tables and Parquet files.

pandas and pyarrow are optional: they are imported only when used (``storage/formats/extras.py``).
Every format here is plain data: loading never runs code from the file.
"""
