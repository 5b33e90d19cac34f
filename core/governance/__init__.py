"""Governance: risk tiers, the policy engine, capability tokens and approvals."""
