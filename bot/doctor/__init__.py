"""`lancelot doctor`: every part Lancelot depends on, checked at once, each with its fix."""

from bot.doctor.runner import diagnose, run_doctor

__all__ = ["diagnose", "run_doctor"]
