"""Skills machinery: manifests, the registry, the executor, the factory and /skills."""
