"""Scheduled jobs: declared in config/scheduler.yaml, claimed once in scheduler.db, gated."""

from core.scheduler.config import JobSpec, load_jobs
from core.scheduler.engine import Scheduler
from core.scheduler.gates import READY, GateRefusal, Gates
from core.scheduler.job import JobContext, JobRunner
from core.scheduler.model import Outcome
from core.scheduler.store import SchedulerStore

__all__ = [
    "READY",
    "GateRefusal",
    "Gates",
    "JobContext",
    "JobRunner",
    "JobSpec",
    "Outcome",
    "Scheduler",
    "SchedulerStore",
    "load_jobs",
]
