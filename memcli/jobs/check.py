"""One check of `mem health`: its name, status, one-line message and figures.

Its own module so that the checks of each part (vectors, stored secrets, team memory)
and the health job that runs them all import it, and none of them imports the job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


@dataclass
class Check:
    name: str
    status: str
    message: str = ""
    figures: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"name": self.name, "status": self.status, "message": self.message, "figures": self.figures}
