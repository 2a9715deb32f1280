"""Every exporter module; importing this package registers them all."""
