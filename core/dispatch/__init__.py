"""The chain a message passes, link by link, and the path of a button press."""
