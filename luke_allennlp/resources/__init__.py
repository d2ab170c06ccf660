"""Every file format the project reads or writes, with its reader and writer."""
