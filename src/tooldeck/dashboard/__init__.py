"""The web dashboard host: agent sessions, transcripts, the selection, chats and the audit,
served beside ``/mcp`` by ``tooldeck serve --http``."""
