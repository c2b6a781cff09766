"""A wheat of the Python edition, written as a ledger: autocommit connections
(``isolation_level=None``) with explicit ``BEGIN IMMEDIATE`` transactions;
every call loads the whole row into a Python object, decides in Python, and
saves the whole row back, a refused call too (with the values it had); the
columns declared in another order and read by name; ``enqueue`` a plain
``INSERT`` whose primary-key violation means "already there"; ``complete``
clears the owner and ``until``; ``done`` answered as ``True``/``False``;
``claim_many`` lets the last owner claim first, while the others wait at a
gate until it holds the write lock, so the last owner always wins a free job.

Freedoms taken: claim-many-winner, refused-write, column-order,
complete-row, done-type, busy-timeout, error-text.
"""

import dataclasses
import math
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor


@dataclasses.dataclass
class Job:
    id: str
    owner: "str | None"
    until: float
    fence: int
    result: "str | None"
    done: bool

    def holds(self, owner, fence, now):
        return self.owner == owner and self.fence == fence and not self.done and self.until > now


class Ledger:
    """One connection, one ``BEGIN IMMEDIATE`` transaction."""

    def __init__(self, path):
        self.conn = sqlite3.connect(path, timeout=60.0, isolation_level=None)
        self.conn.row_factory = sqlite3.Row

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, kind, value, traceback):
        try:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self.conn.close()

    def load(self, job_id):
        row = self.conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            return None
        return Job(row["id"], row["owner"], row["until"], row["fence"], row["result"],
                   bool(row["done"]))

    def save(self, job):
        self.conn.execute(
            "UPDATE jobs SET owner = ?, until = ?, fence = ?, result = ?, done = ? WHERE id = ?",
            (job.owner, job.until, job.fence, job.result, int(job.done), job.id),
        )


def _checked(now, ttl):
    if ttl is not None and (ttl != ttl or ttl <= 0 or math.isinf(ttl)):
        raise ValueError(f"invalid ttl {ttl!r}: a lease lasts a finite, positive time")
    if now != now or math.isinf(now):
        raise ValueError(f"invalid time {now!r}")


def init_db(path):
    conn = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS jobs ("
            "done INTEGER NOT NULL DEFAULT 0, "
            "result TEXT, "
            "fence INTEGER NOT NULL DEFAULT 0, "
            "until REAL NOT NULL DEFAULT 0, "
            "owner TEXT, "
            "id TEXT PRIMARY KEY)"
        )
    finally:
        conn.close()


def enqueue(path, job_id):
    try:
        with Ledger(path) as ledger:
            ledger.conn.execute("INSERT INTO jobs (id) VALUES (?)", (job_id,))
    except sqlite3.IntegrityError:
        return False
    return True


def state(path, job_id):
    conn = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    return {key: row[key] for key in ("id", "owner", "until", "fence", "result")} | {
        "done": bool(row["done"])
    }


def _claim(path, job_id, owner, now, ttl, locked=lambda: None):
    _checked(now, ttl)
    with Ledger(path) as ledger:
        locked()
        job = ledger.load(job_id)
        if job is None:
            return None
        if job.done or job.until > now:
            ledger.save(job)
            return None
        job.owner, job.until, job.fence = owner, now + ttl, job.fence + 1
        ledger.save(job)
        return job.fence


def claim(path, job_id, owner, now, ttl):
    return _claim(path, job_id, owner, now, ttl)


def renew(path, job_id, owner, fence, now, ttl):
    _checked(now, ttl)
    with Ledger(path) as ledger:
        job = ledger.load(job_id)
        if job is None:
            return False
        held = job.holds(owner, fence, now)
        if held:
            job.until = now + ttl
        ledger.save(job)
        return held


def complete(path, job_id, owner, fence, now, result):
    _checked(now, None)
    with Ledger(path) as ledger:
        job = ledger.load(job_id)
        if job is None:
            return False
        held = job.holds(owner, fence, now)
        if held:
            job.result, job.done, job.owner, job.until = result, True, None, 0.0
        ledger.save(job)
        return held


def release(path, job_id, owner, fence):
    with Ledger(path) as ledger:
        job = ledger.load(job_id)
        if job is None:
            return False
        ok = job.owner == owner and job.fence == fence and not job.done
        if ok:
            job.owner, job.until = None, 0.0
        ledger.save(job)
        return ok


def claim_many(path, job_id, owners, now, ttl):
    owners = list(owners)
    if not owners:
        return []
    gate = threading.Event()
    leader = len(owners) - 1

    def one(index):
        if index == leader:
            try:
                return _claim(path, job_id, owners[index], now, ttl, gate.set)
            finally:
                gate.set()
        gate.wait()
        return claim(path, job_id, owners[index], now, ttl)

    with ThreadPoolExecutor(max_workers=len(owners)) as pool:
        return list(pool.map(one, range(len(owners))))
