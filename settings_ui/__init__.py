"""Settings: each user's AgentConfig, edited on a page that saves itself."""
