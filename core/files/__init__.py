"""Files to and from the owner's phone: the inbox, voice notes, /get and the send_file tool."""
