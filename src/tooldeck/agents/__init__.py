"""Agent sessions, chats and model presets: the services behind the ``agents`` tool domain."""
