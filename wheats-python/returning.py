"""A wheat of the Python edition: every write is one ``UPDATE ... RETURNING``
(or ``INSERT ... RETURNING``) statement with named parameters, so a call
decides and writes in the same statement; Python's default (deferred,
implicit) transactions, committed by ``with conn:``; WAL journal on every
connection; ``done`` answered as ``True``/``False``; ``now`` checked before
``ttl``; ``complete`` also sets ``until`` to ``now``; ``claim_many`` starts a
thread per owner and lets them all go from a starting line at once.

Freedoms taken: journal-mode, ddl-text, done-type, check-order, complete-row,
busy-timeout, error-text.
"""

import math
import sqlite3
import threading


def _open(path):
    conn = sqlite3.connect(path, timeout=30.0)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _valid(now, ttl=None):
    if not math.isfinite(now):
        raise ValueError(f"now is not a finite time: {now}")
    if ttl is not None and (math.isnan(ttl) or math.isinf(ttl) or ttl <= 0):
        raise ValueError(f"a lease needs a positive, finite ttl (got {ttl})")


def _write(path, sql, params):
    """Runs one writing statement and answers whether it returned a row."""
    conn = _open(path)
    try:
        with conn:
            rows = conn.execute(sql, params).fetchall()
        return rows[0] if rows else None
    finally:
        conn.close()


def init_db(path):
    conn = _open(path)
    try:
        with conn:
            conn.execute(
                'CREATE TABLE IF NOT EXISTS "jobs" ('
                ' "id" TEXT PRIMARY KEY,'
                ' "owner" TEXT,'
                ' "until" REAL NOT NULL DEFAULT 0,'
                ' "fence" INTEGER NOT NULL DEFAULT 0,'
                ' "result" TEXT,'
                ' "done" INTEGER NOT NULL DEFAULT 0)'
            )
    finally:
        conn.close()


def enqueue(path, job_id):
    row = _write(
        path,
        "INSERT INTO jobs (id) VALUES (:id) ON CONFLICT (id) DO NOTHING RETURNING id",
        {"id": job_id},
    )
    return row is not None


def state(path, job_id):
    conn = _open(path)
    try:
        row = conn.execute(
            "SELECT id, owner, until, fence, result, done FROM jobs WHERE id = :id",
            {"id": job_id},
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    return {
        "id": row[0],
        "owner": row[1],
        "until": row[2],
        "fence": row[3],
        "result": row[4],
        "done": row[5] != 0,
    }


def claim(path, job_id, owner, now, ttl):
    _valid(now, ttl)
    row = _write(
        path,
        "UPDATE jobs SET owner = :owner, until = :until, fence = fence + 1 "
        "WHERE id = :id AND done = 0 AND until <= :now RETURNING fence",
        {"owner": owner, "until": now + ttl, "id": job_id, "now": now},
    )
    return None if row is None else row[0]


def renew(path, job_id, owner, fence, now, ttl):
    _valid(now, ttl)
    row = _write(
        path,
        "UPDATE jobs SET until = :until WHERE id = :id AND owner = :owner "
        "AND fence = :fence AND done = 0 AND until > :now RETURNING 1",
        {"until": now + ttl, "id": job_id, "owner": owner, "fence": fence, "now": now},
    )
    return row is not None


def complete(path, job_id, owner, fence, now, result):
    _valid(now)
    row = _write(
        path,
        "UPDATE jobs SET result = :result, done = 1, until = :now WHERE id = :id "
        "AND owner = :owner AND fence = :fence AND done = 0 AND until > :now RETURNING 1",
        {"result": result, "id": job_id, "owner": owner, "fence": fence, "now": now},
    )
    return row is not None


def release(path, job_id, owner, fence):
    row = _write(
        path,
        "UPDATE jobs SET owner = NULL, until = 0 WHERE id = :id AND owner = :owner "
        "AND fence = :fence AND done = 0 RETURNING 1",
        {"id": job_id, "owner": owner, "fence": fence},
    )
    return row is not None


def claim_many(path, job_id, owners, now, ttl):
    owners = list(owners)
    answers = [None] * len(owners)
    errors = [None] * len(owners)
    start = threading.Barrier(len(owners)) if owners else None

    def one(index, owner):
        try:
            start.wait()
            answers[index] = claim(path, job_id, owner, now, ttl)
        except BaseException as err:  # handed to the caller below
            errors[index] = err

    threads = [threading.Thread(target=one, args=(i, o)) for i, o in enumerate(owners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for err in errors:
        if err is not None:
            raise err
    return answers
