"""The agent loop: free text in, a truthful answer or governed actions out."""
