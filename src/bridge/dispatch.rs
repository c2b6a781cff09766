// Included (`include!`) into an implementation's crate, inside a module placed
// at the end of the implementation's own file: turns a request from the bridge
// into a call of the implementation's API (found at `super::`, the top level of
// the implementation) and its answer back. The including module brings the
// bridge crate into scope as `bridge`. fencelab compiles it against
// `src/lease.rs` too (see `bridge::tests`), so it stays checked.

use bridge::protocol::{Answer, ErrorValue, Failure, JobRow, Request};

pub fn dispatch(request: Request) -> Result<Answer, Failure> {
    match request {
        Request::InitDb { path } => super::init_db(&path).map(|()| Answer::Unit),
        Request::Enqueue { path, job_id } => super::enqueue(&path, &job_id).map(Answer::Bool),
        Request::State { path, job_id } => super::state(&path, &job_id).map(|job| {
            Answer::Job(job.map(|job| JobRow {
                id: job.id,
                owner: job.owner,
                until: job.until.into(),
                fence: job.fence,
                result: job.result,
                done: job.done,
            }))
        }),
        Request::Claim { path, job_id, owner, now, ttl } => {
            super::claim(&path, &job_id, &owner, now.into(), ttl.into()).map(Answer::Fence)
        }
        Request::Renew { path, job_id, owner, fence, now, ttl } => {
            super::renew(&path, &job_id, &owner, fence, now.into(), ttl.into()).map(Answer::Bool)
        }
        Request::Complete { path, job_id, owner, fence, now, result } => {
            super::complete(&path, &job_id, &owner, fence, now.into(), &result).map(Answer::Bool)
        }
        Request::Release { path, job_id, owner, fence } => {
            super::release(&path, &job_id, &owner, fence).map(Answer::Bool)
        }
        Request::ClaimMany { path, job_id, owners, now, ttl } => {
            let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
            super::claim_many(&path, &job_id, &owners, now.into(), ttl.into()).map(Answer::Fences)
        }
    }
    .map_err(failure)
}

#[allow(unreachable_patterns)]
fn failure(error: super::LeaseError) -> Failure {
    let display = error.to_string();
    let error = match error {
        super::LeaseError::InvalidTtl(ttl) => ErrorValue::InvalidTtl(ttl.into()),
        super::LeaseError::InvalidNow(now) => ErrorValue::InvalidNow(now.into()),
        super::LeaseError::Db(err) => ErrorValue::Db {
            code: err.sqlite_error().map(|e| e.extended_code),
            message: err.to_string(),
        },
        other => ErrorValue::Other(format!("{other:?}")),
    };
    Failure { error, display }
}
