"""The audit measured on faulty customers and agents."""
