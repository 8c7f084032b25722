"""Agents that drive the environment: strands-agents over litellm, and scripted agents."""
