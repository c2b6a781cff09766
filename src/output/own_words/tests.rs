//! Every `Said` in both languages, each built by the code that says it.

use super::*;
use crate::engine::outcome::{TestOutcome, TimeRule};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// `said` in English and in Japanese, and both through a marked line.
fn says(said: Said, en: &str, ja: &str) {
    assert_eq!(words(&said, Lang::En), en);
    assert_eq!(words(&said, Lang::Ja), ja);
    assert_eq!(word(&said.marked(), Lang::Ja), ja, "{en}");
    assert_eq!(word(&said.marked(), Lang::En), en);
}

fn ended(raw: i32, call: &str) -> Said {
    Said::ProcessEnded {
        call: call.to_string(),
        how: crate::bridge::client::describe(ExitStatus::from_raw(raw)),
    }
}

#[test]
fn a_process_that_exited_during_a_call() {
    says(
        ended(1 << 8, "init_db"),
        "fencelab: the implementation's process exited with status 1 during init_db()",
        "fencelab: 実装のプロセスが init_db() の途中で終了ステータス 1 で終了しました",
    );
}

#[test]
fn a_process_killed_by_a_signal_during_a_call() {
    says(
        ended(libc::SIGABRT, "claim"),
        "fencelab: the implementation's process was killed by signal 6 (SIGABRT: an abort, such as a stack overflow) during claim()",
        "fencelab: 実装のプロセスが claim() の途中でシグナル 6（SIGABRT: 中断。スタックオーバーフローなど）で終了させられました",
    );
    says(
        ended(libc::SIGKILL, "renew"),
        "fencelab: the implementation's process was killed by signal 9 (SIGKILL) during renew()",
        "fencelab: 実装のプロセスが renew() の途中でシグナル 9（SIGKILL）で終了させられました",
    );
}

#[test]
fn a_process_that_flooded_or_stopped_answering() {
    let flooded = How::Flooded {
        mib: 4,
        streams: vec!["stdout".to_string(), "stderr".to_string()],
    };
    says(
        Said::ProcessEnded {
            call: "claim".to_string(),
            how: flooded,
        },
        "fencelab: the implementation's process printed more than 4 MiB on stdout and stderr and was killed during claim()",
        "fencelab: 実装のプロセスが claim() の途中でstdout and stderr に 4 MiB を超えて出力したため終了させられました",
    );
    says(
        Said::ProcessEnded {
            call: "state".to_string(),
            how: How::AnswerTooLong { mib: 8 },
        },
        "fencelab: the implementation's process stopped answering (it sent an answer of more than 8 MiB) during state()",
        "fencelab: 実装のプロセスが state() の途中で応答しなくなりました（8 MiB を超える答えを送ってきました）",
    );
    says(
        Said::ProcessEnded {
            call: "state".to_string(),
            how: How::StoppedAnswering {
                why: "cannot connect: refused".to_string(),
            },
        },
        "fencelab: the implementation's process stopped answering (cannot connect: refused) during state()",
        "fencelab: 実装のプロセスが state() の途中で応答しなくなりました（cannot connect: refused）",
    );
    says(
        Said::ProcessEnded {
            call: "state".to_string(),
            how: How::Ended {
                status: "odd".to_string(),
            },
        },
        "fencelab: the implementation's process ended (odd) during state()",
        "fencelab: 実装のプロセスが state() の途中で終了しました（odd）",
    );
}

#[test]
fn a_process_that_could_not_start() {
    says(
        Said::CouldNotStart {
            why: "/x: No such file".to_string(),
        },
        "fencelab: the implementation's process could not start: /x: No such file",
        "fencelab: 実装のプロセスを起動できませんでした: /x: No such file",
    );
}

#[test]
fn a_process_that_took_the_judge_down() {
    let judge = TestOutcome::Failed {
        kind: crate::engine::outcome::FailureKind::Crashed,
        message: Said::TookJudgeDown {
            how: crate::bridge::client::describe(ExitStatus::from_raw(libc::SIGSEGV)),
        }
        .marked(),
    };
    let ja = "fencelab: 実装のプロセスがジャッジを巻き込みました: ジャッジがシグナル 11（SIGSEGV: 不正なメモリアクセス）で終了させられました";
    assert_eq!(word(&judge.marked_message().unwrap(), Lang::Ja), ja);
    assert_eq!(
        judge.message().unwrap(),
        "fencelab: the implementation's process took the judge down: the judge was killed by signal 11 (SIGSEGV: an invalid memory access)"
    );
}

#[test]
fn streams_cut_short() {
    says(
        Said::StreamsCut {
            kib: 4,
            dropped: 120,
        },
        "(the first 4 KiB of each of its streams are shown above; 120 more bytes were dropped)",
        "（各ストリームの最初の 4 KiB を上に示しました。残りの 120 バイトは省きました）",
    );
}

#[test]
fn a_panic_or_a_failure_in_a_call() {
    let failed = |at: Option<&str>, panicked| Said::FailedInCall {
        call: "claim".to_string(),
        at: at.map(str::to_string),
        panicked,
    };
    says(
        failed(Some("lease.rs:12:5"), true),
        "fencelab: the implementation panicked in claim() at lease.rs:12:5:",
        "fencelab: 実装が claim() の中でパニックしました（場所: lease.rs:12:5）:",
    );
    says(
        failed(None, true),
        "fencelab: the implementation panicked in claim():",
        "fencelab: 実装が claim() の中でパニックしました:",
    );
    says(
        failed(Some("lease.py:3"), false),
        "fencelab: the implementation failed in claim() at lease.py:3:",
        "fencelab: 実装が claim() の中で失敗しました（場所: lease.py:3）:",
    );
    says(
        failed(None, false),
        "fencelab: the implementation failed in claim():",
        "fencelab: 実装が claim() の中で失敗しました:",
    );
}

#[test]
fn an_error_the_contract_does_not_have() {
    says(
        Said::NotInContract {
            error: "ValueError: jobs".to_string(),
            valid: true,
        },
        "the implementation returned an error the contract does not have: ValueError: jobs (raised although every argument is valid)",
        "実装が契約にないエラーを返しました: ValueError: jobs（引数はどれも正しいのに上がりました）",
    );
    says(
        Said::NotInContract {
            error: "Busy".to_string(),
            valid: false,
        },
        "the implementation returned an error the contract does not have: Busy",
        "実装が契約にないエラーを返しました: Busy",
    );
}

#[test]
fn processes_left_running_by_either_side() {
    says(
        crate::bridge::held::LEFT_BEHIND,
        "fencelab: the implementation left processes running after the test; they were killed",
        "fencelab: 実装がテストの後もプロセスを動かしたままにしていました。それらは終了させました",
    );
    says(
        Said::LeftRunning { who: Who::Test },
        "fencelab: the test left processes running after it ended; they were killed",
        "fencelab: テストが終わった後もプロセスを動かしたままにしていました。それらは終了させました",
    );
}

#[test]
fn a_trials_space_and_memory_used_up() {
    says(
        Said::SpaceUsedUp {
            who: Who::Test,
            mib: 64,
        },
        "fencelab: the test wrote more than 64 MiB (or too many files) in the trial's directory; what it wrote beyond that was refused",
        "fencelab: テストが試行のディレクトリに 64 MiB（またはファイル数の上限）を超えて書き込みました。超えた分は拒否されました",
    );
    says(
        crate::engine::runner::out_of_memory(Who::Test),
        "fencelab: the test ran out of memory: its processes used more than 1024 MiB together, and the kernel killed them",
        "fencelab: テストがメモリを使い果たしました。そのプロセスが合わせて 1024 MiB を超えて使ったため、カーネルが終了させました",
    );
    says(
        Said::OutputDropped { bytes: 9 },
        "[... 9 more bytes of output dropped]",
        "[... 出力のうち 9 バイトを省きました]",
    );
}

#[test]
fn a_test_stopped_for_time_by_each_rule() {
    let stopped = |rule, secs, confirmed| TestOutcome::TimedOut {
        limit_secs: 10.0,
        stopped_by: rule,
        rule_secs: secs,
        confirmed,
    };
    let ja = |o: TestOutcome| word(&o.marked_message().unwrap(), Lang::Ja);
    assert_eq!(
        ja(TestOutcome::timed_out(2.0)),
        "テストが制限時間 2.0 秒のうちに終わらなかったため、終了させました"
    );
    assert_eq!(
        ja(stopped(TimeRule::Spins, Some(0.5), true)),
        "実装が答えを返すまでに CPU を 0.5 秒を超えて使ったため（終わらない計算）、停止させました\n\
         確認済み: ほかのテストの後に単独で実行し直しても、同じく停止しました"
    );
    assert_eq!(
        ja(stopped(TimeRule::Waits, Some(2.0), false)),
        "テストのプロセスがどれも動かないまま合わせて 2.0 秒待ったため（スリープか、誰も解放しないロック）、停止させました"
    );
    assert_eq!(
        TestOutcome::timed_out(2.0).message().unwrap(),
        "the test did not finish within its limit of 2.0 s and was killed"
    );
}

#[test]
fn a_judge_without_a_verdict() {
    says(
        Said::NoVerdict,
        "the judge exited with success but did not report the test as passed",
        "ジャッジは成功として終了しましたが、テストの合格を報告しませんでした",
    );
    says(
        Said::SaidNothing {
            status: "exit status: 3".to_string(),
        },
        "the judge ended with exit status: 3 and said nothing",
        "ジャッジが exit status: 3 で終了し、何も報告しませんでした",
    );
    says(
        Said::Confirmed,
        "confirmed: run again alone after the other tests, it was stopped again",
        "確認済み: ほかのテストの後に単独で実行し直しても、同じく停止しました",
    );
}

/// Only fencelab's marked lines are worded: the learner's lines, even ones
/// that read like fencelab's, are as they were.
#[test]
fn a_learners_lines_are_left_as_they_are() {
    let failed = Said::FailedInCall {
        call: "claim".to_string(),
        at: Some("lease.py:3".to_string()),
        panicked: false,
    };
    let message = format!(
        "{}\nTypeError: the test left processes running\n\
         fencelab: the implementation's process exited with status 1 during claim()",
        failed.marked()
    );
    let lines: Vec<String> = word(&message, Lang::Ja).lines().map(String::from).collect();
    assert_eq!(
        lines,
        [
            "fencelab: 実装が claim() の中で失敗しました（場所: lease.py:3）:",
            "TypeError: the test left processes running",
            "fencelab: the implementation's process exited with status 1 during claim()",
        ]
    );
}
