"""`lancelot doctor`: every part Lancelot depends on, checked at once, each with its fix
(`bot.doctor.runner.run_doctor`)."""
