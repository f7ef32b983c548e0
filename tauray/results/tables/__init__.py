"""Table I/O: the records of each table, their declared schemas, the run folder's layout, the writer, its lock, the readers and compaction."""
