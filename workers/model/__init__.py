"""Model access: the openai-SDK client, the price table, and request-rate limits shared through Redis."""
