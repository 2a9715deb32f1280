"""Devices (scanners) and gates: the organizer resource and the device\x27s own calls."""
