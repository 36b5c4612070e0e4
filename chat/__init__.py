"""Chat: conversations with the Oracle, streamed live."""
