"""Generic HTTP and data plumbing. Imports no domain package."""
