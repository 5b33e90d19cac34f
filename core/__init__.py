"""Lancelot's domain: the bus, governance, receipts and the subsystems behind them."""
