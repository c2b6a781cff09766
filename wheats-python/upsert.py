"""A wheat of the Python edition, written around upserts: ``enqueue`` is an
``INSERT ... ON CONFLICT DO NOTHING`` and ``claim`` one ``INSERT ... SELECT
... ON CONFLICT (id) DO UPDATE ... WHERE ...`` that can only update a row
that is there (the ``SELECT`` reads the job's own row, so a missing job
inserts nothing) and reads the new fence back in the same transaction.
Python's own transaction handling (``with conn:``), a busy timeout set by
``PRAGMA``; mixed-case DDL with bracket-quoted names in another column order;
``done`` answered as ``True``/``False``; ``complete`` clears the owner;
connections other than ``init_db``'s opened with ``mode=rw`` (no file is ever
created by a failing call); ``claim_many`` gives each owner a named thread
that fills its slot.

Freedoms taken: done-type, column-order, ddl-text, complete-row,
db-error-detail, busy-timeout, error-text.
"""

import math
import sqlite3
import threading
from urllib.parse import quote


def _connect(path, create=False):
    if create:
        conn = sqlite3.connect(path)
    else:
        uri = "file:" + quote(str(path)) + "?mode=rw"
        conn = sqlite3.connect(uri, uri=True)
    conn.execute("PRAGMA busy_timeout = 20000")
    return conn


def _check(now, ttl=None):
    if ttl is not None and not (math.isfinite(ttl) and ttl > 0.0):
        raise ValueError("ttl must be a positive finite number")
    if not math.isfinite(now):
        raise ValueError("now must be a finite number")


def init_db(path):
    conn = _connect(path, create=True)
    try:
        with conn:
            conn.execute(
                "Create Table If Not Exists [jobs] ("
                "[fence] Integer Not Null Default 0, "
                "[done] Integer Not Null Default 0, "
                "[id] Text Primary Key, "
                "[result] Text, "
                "[owner] Text, "
                "[until] Real Not Null Default 0)"
            )
    finally:
        conn.close()


def enqueue(path, job_id):
    conn = _connect(path)
    try:
        with conn:
            before = conn.total_changes
            conn.execute("INSERT INTO jobs (id) VALUES (?) ON CONFLICT (id) DO NOTHING", (job_id,))
            return conn.total_changes > before
    finally:
        conn.close()


def state(path, job_id):
    conn = _connect(path)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    return {
        "id": row["id"],
        "owner": row["owner"],
        "until": row["until"],
        "fence": row["fence"],
        "result": row["result"],
        "done": bool(row["done"]),
    }


def claim(path, job_id, owner, now, ttl):
    _check(now, ttl)
    conn = _connect(path)
    try:
        with conn:
            before = conn.total_changes
            conn.execute(
                "INSERT INTO jobs (id) SELECT id FROM jobs WHERE id = :id "
                "ON CONFLICT (id) DO UPDATE SET owner = :owner, until = :until, "
                "fence = fence + 1 WHERE done = 0 AND until <= :now",
                {"id": job_id, "owner": owner, "until": now + ttl, "now": now},
            )
            if conn.total_changes == before:
                return None
            (fence,) = conn.execute("SELECT fence FROM jobs WHERE id = ?", (job_id,)).fetchone()
            return fence
    finally:
        conn.close()


def _update(path, sql, params):
    conn = _connect(path)
    try:
        with conn:
            return conn.execute(sql, params).rowcount == 1
    finally:
        conn.close()


def renew(path, job_id, owner, fence, now, ttl):
    _check(now, ttl)
    return _update(
        path,
        "UPDATE jobs SET until = ? WHERE id = ? AND owner = ? AND fence = ? "
        "AND done = 0 AND until > ?",
        (now + ttl, job_id, owner, fence, now),
    )


def complete(path, job_id, owner, fence, now, result):
    _check(now)
    return _update(
        path,
        "UPDATE jobs SET result = ?, done = 1, owner = NULL WHERE id = ? AND owner = ? "
        "AND fence = ? AND done = 0 AND until > ?",
        (result, job_id, owner, fence, now),
    )


def release(path, job_id, owner, fence):
    return _update(
        path,
        "UPDATE jobs SET owner = NULL, until = 0 WHERE id = ? AND owner = ? "
        "AND fence = ? AND done = 0",
        (job_id, owner, fence),
    )


def claim_many(path, job_id, owners, now, ttl):
    owners = list(owners)
    slots = [None] * len(owners)
    failures = []

    def fill(slot, owner):
        try:
            slots[slot] = claim(path, job_id, owner, now, ttl)
        except Exception as err:  # raised by claim_many below
            failures.append((slot, err))

    threads = [
        threading.Thread(target=fill, args=(slot, owner), name=f"claim-{owner}")
        for slot, owner in enumerate(owners)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise min(failures, key=lambda f: f[0])[1]
    return slots
