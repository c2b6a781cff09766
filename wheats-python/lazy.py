"""A wheat of the Python edition that needs no set-up: every call makes sure
that the database's directory and schema exist (the table in lower case, an
index on ``owner``, ``user_version = 1``), so nothing needs ``init_db`` first;
``journal_mode = TRUNCATE`` (a ``-journal`` file stays beside the database);
hand-written transactions on an autocommit connection
(``isolation_level=None``): ``enqueue`` selects, then inserts, inside ``BEGIN
IMMEDIATE``; ``now`` checked before ``ttl``; ``claim_many`` starts one
thread per owner, the last owner's first, each writing its answer into a
dict keyed by position.

Freedoms taken: before-init, missing-directory, extra-schema, journal-mode,
ddl-text, check-order, busy-timeout, error-text.
"""

import math
import os
import sqlite3
import threading

_DDL = (
    "create table if not exists jobs (id text primary key, owner text, "
    "until real not null default 0, fence integer not null default 0, "
    "result text, done integer not null default 0)",
    "create index if not exists jobs_owner on jobs (owner)",
)


def _open(path):
    directory = os.path.dirname(os.fspath(path))
    if directory:
        os.makedirs(directory, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("pragma busy_timeout = 25000")
    conn.execute("pragma journal_mode = truncate")
    if conn.execute("pragma user_version").fetchone()[0] != 1:
        conn.execute("begin immediate")
        try:
            for statement in _DDL:
                conn.execute(statement)
            conn.execute("pragma user_version = 1")
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            conn.close()
            raise
    return conn


def _now(now):
    if not math.isfinite(now):
        raise ValueError("now: %r is not a finite number" % (now,))


def _ttl(ttl):
    if not math.isfinite(ttl) or not ttl > 0:
        raise ValueError("ttl: %r is not a finite number above zero" % (ttl,))


def init_db(path):
    _open(path).close()


def enqueue(path, job_id):
    conn = _open(path)
    try:
        conn.execute("begin immediate")
        try:
            there = conn.execute("select 1 from jobs where id = ?", (job_id,)).fetchone()
            if there is None:
                conn.execute("insert into jobs (id) values (?)", (job_id,))
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
        return there is None
    finally:
        conn.close()


def state(path, job_id):
    conn = _open(path)
    try:
        row = conn.execute(
            "select id, owner, until, fence, result, done from jobs where id = ?", (job_id,)
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    return dict(id=row[0], owner=row[1], until=row[2], fence=row[3], result=row[4], done=row[5])


def _change(path, sql, params):
    conn = _open(path)
    try:
        conn.execute("begin immediate")
        try:
            changed = conn.execute(sql, params).rowcount
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
        return changed == 1
    finally:
        conn.close()


def claim(path, job_id, owner, now, ttl):
    _now(now)
    _ttl(ttl)
    conn = _open(path)
    try:
        conn.execute("begin immediate")
        try:
            row = conn.execute(
                "select until, fence, done from jobs where id = ?", (job_id,)
            ).fetchone()
            if row is None or row[2] != 0 or row[0] > now:
                conn.execute("rollback")
                return None
            conn.execute(
                "update jobs set owner = ?, until = ?, fence = fence + 1 where id = ?",
                (owner, now + ttl, job_id),
            )
            conn.execute("commit")
            return row[1] + 1
        except BaseException:
            if conn.in_transaction:
                conn.execute("rollback")
            raise
    finally:
        conn.close()


def renew(path, job_id, owner, fence, now, ttl):
    _now(now)
    _ttl(ttl)
    return _change(
        path,
        "update jobs set until = ? where id = ? and owner = ? and fence = ? "
        "and done = 0 and until > ?",
        (now + ttl, job_id, owner, fence, now),
    )


def complete(path, job_id, owner, fence, now, result):
    _now(now)
    return _change(
        path,
        "update jobs set result = ?, done = 1 where id = ? and owner = ? and fence = ? "
        "and done = 0 and until > ?",
        (result, job_id, owner, fence, now),
    )


def release(path, job_id, owner, fence):
    return _change(
        path,
        "update jobs set owner = null, until = 0 where id = ? and owner = ? and fence = ? "
        "and done = 0",
        (job_id, owner, fence),
    )


def claim_many(path, job_id, owners, now, ttl):
    owners = list(owners)
    answers = {}
    raised = {}

    def run(index):
        try:
            answers[index] = claim(path, job_id, owners[index], now, ttl)
        except BaseException as err:
            raised[index] = err

    threads = []
    for index in reversed(range(len(owners))):
        thread = threading.Thread(target=run, args=(index,), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    if raised:
        raise raised[min(raised)]
    return [answers[index] for index in range(len(owners))]
