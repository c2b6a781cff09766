"""The lab's subject in Python: the reference implementation of the
lease-and-fence contract, as the worksheet states it.

A ``jobs`` table in SQLite holds, per job, who owns it (``owner``), until when
the lease lasts (``until``) and which generation of claim is current
(``fence``, which grows on every claim). A worker that stalls past its lease
and then wakes up still holds an old fence, so its renew, complete and release
are refused: the stored result can only be written by the current generation.

Standard library only (``sqlite3``, ``concurrent.futures``), Python 3.10 or
newer. Time is a number the caller passes; no clock is read here. Every call
opens a connection of its own and closes it before it returns.
"""

from __future__ import annotations

import math
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager

#: How long (seconds) a call waits for another connection's write lock.
BUSY_TIMEOUT = 10.0

COLUMNS = ("id", "owner", "until", "fence", "result", "done")


@contextmanager
def _connect(path):
    """A fresh connection in autocommit mode (transactions are explicit),
    which waits on a busy database instead of failing, closed on the way out."""
    with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)) as conn:
        yield conn


def _check_ttl(ttl):
    if not (math.isfinite(ttl) and ttl > 0):
        raise ValueError(f"ttl must be a finite number greater than 0, not {ttl!r}")


def _check_now(now):
    if not math.isfinite(now):
        raise ValueError(f"now must be a finite number, not {now!r}")


def init_db(path):
    """Step 1. Creates the jobs table if it is missing. Running it again on a
    live database changes no row: resetting fences would make old tokens valid
    again."""
    with _connect(path) as conn:
        conn.execute(
            """CREATE TABLE IF NOT EXISTS jobs (
                id TEXT PRIMARY KEY,
                owner TEXT,
                until REAL NOT NULL DEFAULT 0,
                fence INTEGER NOT NULL DEFAULT 0,
                result TEXT,
                done INTEGER NOT NULL DEFAULT 0
            )"""
        )


def enqueue(path, job_id):
    """Step 2. Inserts a job that is not there yet and returns True; an
    existing job is left exactly as it is and False is returned."""
    with _connect(path) as conn:
        cursor = conn.execute("INSERT OR IGNORE INTO jobs (id) VALUES (?)", (job_id,))
        return cursor.rowcount == 1


def state(path, job_id):
    """Step 3. The stored row as a dict with the keys id, owner, until, fence,
    result and done, read through a connection of its own; None when there is
    no such job."""
    with _connect(path) as conn:
        row = conn.execute(
            "SELECT id, owner, until, fence, result, done FROM jobs WHERE id=?", (job_id,)
        ).fetchone()
    return dict(zip(COLUMNS, row)) if row else None


def claim(path, job_id, owner, now, ttl):
    """Step 4. Takes the lease on a job that is free (never claimed, released
    or expired: until <= now) and not done, for ttl from now, and returns the
    new fence. A missing, done or held job gives None. The read and the write
    share one BEGIN IMMEDIATE transaction, so two claimers cannot both decide
    that the job is free. ValueError when ttl <= 0 or a number is not finite."""
    _check_ttl(ttl)
    _check_now(now)
    with _connect(path) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(
                "SELECT until, fence, done FROM jobs WHERE id=?", (job_id,)
            ).fetchone()
            if row is None or row[2] or row[0] > now:
                conn.execute("ROLLBACK")
                return None
            fence = row[1] + 1
            conn.execute(
                "UPDATE jobs SET owner=?, until=?, fence=? WHERE id=?",
                (owner, now + ttl, fence, job_id),
            )
            conn.execute("COMMIT")
            return fence
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def renew(path, job_id, owner, fence, now, ttl):
    """Step 5. Extends the lease to now + ttl, but only for the current owner
    and fence of a job that is not done and whose lease is still live. An
    expired lease is never revived."""
    _check_ttl(ttl)
    _check_now(now)
    with _connect(path) as conn:
        cursor = conn.execute(
            "UPDATE jobs SET until=? WHERE id=? AND owner=? AND fence=? "
            "AND done=0 AND until>?", (now+ttl, job_id, owner, fence, now),
        )
        return cursor.rowcount == 1


def complete(path, job_id, owner, fence, now, result):
    """Step 6. Stores the result and marks the job done, but only under the
    current lease (owner and fence match, not done, until > now). Anything
    else is refused and the stored result stays as it was."""
    _check_now(now)
    with _connect(path) as conn:
        cursor = conn.execute(
            "UPDATE jobs SET result=?, done=1 WHERE id=? AND owner=? AND fence=? "
            "AND done=0 AND until>?", (result, job_id, owner, fence, now),
        )
        return cursor.rowcount == 1


def release(path, job_id, owner, fence):
    """Step 7. Gives the lease back (owner cleared, until = 0) when owner and
    fence match and the job is not done. The fence is kept, so the next claim
    gets a token that was never handed out before."""
    with _connect(path) as conn:
        cursor = conn.execute(
            "UPDATE jobs SET owner=NULL,until=0 WHERE "
            "id=? AND owner=? AND fence=? AND done=0", (job_id, owner, fence),
        )
        return cursor.rowcount == 1


def claim_many(path, job_id, owners, now, ttl):
    """Step 8. Claims the job for every owner at once, each on a thread and
    connection of its own, and returns the answers in the order of owners.
    On a free job exactly one of them wins."""
    owners = list(owners)
    with ThreadPoolExecutor(max_workers=max(len(owners), 1)) as pool:
        return list(pool.map(lambda owner: claim(path, job_id, owner, now, ttl), owners))
