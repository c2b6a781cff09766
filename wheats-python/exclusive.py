"""A wheat of the Python edition: every call that may write reads the row
under ``BEGIN EXCLUSIVE`` and decides in Python, then writes only what
changes (autocommit connections, ``isolation_level=None``, and explicit
transactions); the key is a table constraint, ``id NOT NULL``, a ``CHECK``
on the fence, an index on ``owner``; ``done`` answered as the stored ``0``/``1``
and ``until`` as an ``int`` when it is whole; ``complete`` sets ``until`` to
``0``; ``enqueue`` inserts with ``INSERT ... SELECT ... WHERE NOT EXISTS``;
``claim_many`` submits the owners to a thread pool last first and reads the
answers back in the owners' order.

Freedoms taken: until-type, ddl-text, extra-constraints, extra-schema,
complete-row, reader-wait, busy-timeout, error-text.
"""

import math
import sqlite3
from concurrent.futures import ThreadPoolExecutor

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id     TEXT    NOT NULL,
    owner  TEXT,
    until  REAL    NOT NULL DEFAULT 0.0,
    fence  INTEGER NOT NULL DEFAULT 0 CHECK (fence >= 0),
    result TEXT,
    done   INTEGER NOT NULL DEFAULT FALSE,
    PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs (owner);
"""


class _Exclusive:
    """A connection holding ``BEGIN EXCLUSIVE`` for the ``with`` block:
    committed when the block ends normally, rolled back otherwise."""

    def __init__(self, path):
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout = 45000")

    def __enter__(self):
        self.conn.execute("BEGIN EXCLUSIVE")
        return self.conn

    def __exit__(self, kind, value, traceback):
        try:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self.conn.close()
        return False


def _ttl_ok(ttl):
    if not (ttl > 0 and ttl != math.inf):
        raise ValueError(f"bad ttl: {ttl}")


def _now_ok(now):
    if now != now or now in (math.inf, -math.inf):
        raise ValueError(f"bad now: {now}")


def _row(conn, job_id):
    return conn.execute(
        "SELECT owner, until, fence, done FROM jobs WHERE id = ?", (job_id,)
    ).fetchone()


def _whole(value):
    return int(value) if float(value).is_integer() else value


def init_db(path):
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 45000")
        conn.executescript(_SCHEMA)
    finally:
        conn.close()


def enqueue(path, job_id):
    with _Exclusive(path) as conn:
        cursor = conn.execute(
            "INSERT INTO jobs (id) SELECT ? WHERE NOT EXISTS "
            "(SELECT 1 FROM jobs WHERE id = ?)",
            (job_id, job_id),
        )
        return cursor.rowcount > 0


def state(path, job_id):
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 45000")
        found = conn.execute(
            "SELECT id, owner, until, fence, result, done FROM jobs WHERE id = ?", (job_id,)
        ).fetchone()
    finally:
        conn.close()
    if not found:
        return None
    id_, owner, until, fence, result, done = found
    return {"id": id_, "owner": owner, "until": _whole(until), "fence": fence,
            "result": result, "done": done}


def claim(path, job_id, owner, now, ttl):
    _ttl_ok(ttl)
    _now_ok(now)
    with _Exclusive(path) as conn:
        row = _row(conn, job_id)
        if row is None:
            return None
        _, until, fence, done = row
        if done or until > now:
            return None
        conn.execute(
            "UPDATE jobs SET owner = ?, until = ?, fence = ? WHERE id = ?",
            (owner, now + ttl, fence + 1, job_id),
        )
        return fence + 1


def renew(path, job_id, owner, fence, now, ttl):
    _ttl_ok(ttl)
    _now_ok(now)
    with _Exclusive(path) as conn:
        row = _row(conn, job_id)
        if row is None or row[0] != owner or row[2] != fence or row[3] or not row[1] > now:
            return False
        conn.execute("UPDATE jobs SET until = ? WHERE id = ?", (now + ttl, job_id))
        return True


def complete(path, job_id, owner, fence, now, result):
    _now_ok(now)
    with _Exclusive(path) as conn:
        row = _row(conn, job_id)
        if row is None or row[0] != owner or row[2] != fence or row[3] or not row[1] > now:
            return False
        conn.execute(
            "UPDATE jobs SET result = ?, done = 1, until = 0 WHERE id = ?", (result, job_id)
        )
        return True


def release(path, job_id, owner, fence):
    with _Exclusive(path) as conn:
        row = _row(conn, job_id)
        if row is None or row[0] != owner or row[2] != fence or row[3]:
            return False
        conn.execute("UPDATE jobs SET owner = NULL, until = 0 WHERE id = ?", (job_id,))
        return True


def claim_many(path, job_id, owners, now, ttl):
    owners = list(owners)
    if not owners:
        return []
    with ThreadPoolExecutor(max_workers=len(owners)) as pool:
        futures = {
            index: pool.submit(claim, path, job_id, owners[index], now, ttl)
            for index in reversed(range(len(owners)))
        }
        return [futures[index].result() for index in range(len(owners))]
