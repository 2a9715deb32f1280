"""What every PDF needs, whichever domain draws it: the embedded Unicode fonts.

Imports nothing of admit.
"""
