"""State from sources: commitments, asks and decisions extracted from email, meetings and chats,
tracked to done, and written on the pages they concern (see docs/build.md, "Items")."""
