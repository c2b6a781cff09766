//! fencelab's own words in a failing test's message, in the learner's language.
//! The bridge and the runner write them when a test fails for something other
//! than an observation. The implementation's process ended, panicked or failed
//! in a call, left processes running, or used up its memory or space. The
//! suite's observations have their own table (`lab::observation::translate`).
//!
//! fencelab writes these lines in English where it makes them
//! (`bridge::client`, `engine::runner`, `engine::outcome`); they are translated
//! here. Only whole lines are translated: a learner's own output and Python's
//! traceback around them are never touched. The tests below build each message
//! with the code that writes it, so a change of wording there fails here.

use crate::lab::lang::Lang;
use crate::lab::observation::{fill, holes};

/// Whole lines: English template, Japanese template, the same holes on both
/// sides. Each template, with its `{name}` holes, is matched against a whole
/// line.
const LINES: &[(&str, &str)] = &[
    // bridge::client: the implementation's process ended during a call.
    (
        "fencelab: the implementation's process {how} during {call}",
        "fencelab: 実装のプロセスが {call} の途中で{how}",
    ),
    (
        "fencelab: the implementation's process could not start: {why}",
        "fencelab: 実装のプロセスを起動できませんでした: {why}",
    ),
    (
        "fencelab: the implementation's process took the judge down: the judge {how}",
        "fencelab: 実装のプロセスがジャッジを巻き込みました: ジャッジが{how}",
    ),
    (
        "(the first {n} KiB of each of its streams are shown above; {m} more bytes were dropped)",
        "（各ストリームの最初の {n} KiB を上に示しました。残りの {m} バイトは省きました）",
    ),
    // bridge::client: a panic (Rust) or an exception (Python) in a call.
    (
        "fencelab: the implementation panicked in {call} at {at}:",
        "fencelab: 実装が {call} の中でパニックしました（場所: {at}）:",
    ),
    (
        "fencelab: the implementation panicked in {call}:",
        "fencelab: 実装が {call} の中でパニックしました:",
    ),
    (
        "fencelab: the implementation failed in {call} at {at}:",
        "fencelab: 実装が {call} の中で失敗しました（場所: {at}）:",
    ),
    (
        "fencelab: the implementation failed in {call}:",
        "fencelab: 実装が {call} の中で失敗しました:",
    ),
    (
        "the implementation returned an error the contract does not have: {error}",
        "実装が契約にないエラーを返しました: {error}",
    ),
    // Processes left running (bridge::client, engine::runner).
    (
        "fencelab: the implementation left processes running after the test; they were killed",
        "fencelab: 実装がテストの後もプロセスを動かしたままにしていました。それらは終了させました",
    ),
    (
        "fencelab: the test left processes running after it ended; they were killed",
        "fencelab: テストが終わった後もプロセスを動かしたままにしていました。それらは終了させました",
    ),
    // engine::runner: a trial's space and memory.
    (
        "fencelab: {who} wrote more than {n} MiB (or too many files) in the trial's directory; what it wrote beyond that was refused",
        "fencelab: {who}が試行のディレクトリに {n} MiB（またはファイル数の上限）を超えて書き込みました。超えた分は拒否されました",
    ),
    (
        "fencelab: {who} ran out of memory: its processes used more than {n} MiB together, and the kernel killed them",
        "fencelab: {who}がメモリを使い果たしました。そのプロセスが合わせて {n} MiB を超えて使ったため、カーネルが終了させました",
    ),
    (
        "[... {n} more bytes of output dropped]",
        "[... 出力のうち {n} バイトを省きました]",
    ),
    // engine::outcome: a test that ran out of time, a judge that ended
    // without a verdict.
    (
        "the test did not finish within its limit of {secs} s and was killed",
        "テストが制限時間 {secs} 秒のうちに終わらなかったため、終了させました",
    ),
    (
        "the implementation used more than {secs} s of processor time in this test (it spins) and was stopped",
        "実装がこのテストで CPU 時間を {secs} 秒を超えて使ったため（終わらない計算）、停止させました",
    ),
    (
        "the test waited {secs} s in all with none of its processes running (a sleep, or a lock nobody lets go) and was stopped",
        "テストのプロセスがどれも動かないまま合わせて {secs} 秒待ったため（スリープか、誰も解放しないロック）、停止させました",
    ),
    (
        "confirmed: run again alone after the other tests, it was stopped again",
        "確認済み: ほかのテストの後に単独で実行し直しても、同じく停止しました",
    ),
    (
        "the judge exited with success but did not report the test as passed",
        "ジャッジは成功として終了しましたが、テストの合格を報告しませんでした",
    ),
    (
        "the judge ended with {status} and said nothing",
        "ジャッジが {status} で終了し、何も報告しませんでした",
    ),
];

/// What fills a hole of a line (and of these): how a process ended, who.
const PARTS: &[(&str, &str)] = &[
    // bridge::client::describe, and the flood and the silence.
    (
        "exited with status {code}",
        "終了ステータス {code} で終了しました",
    ),
    (
        "was killed by signal {signal} ({name})",
        "シグナル {signal}（{name}）で終了させられました",
    ),
    (
        "printed more than {n} MiB on {streams} and was killed",
        "{streams} に {n} MiB を超えて出力したため終了させられました",
    ),
    ("stopped answering ({why})", "応答しなくなりました（{why}）"),
    (
        "it sent an answer of more than {n} MiB",
        "{n} MiB を超える答えを送ってきました",
    ),
    ("ended ({status})", "終了しました（{status}）"),
    (
        "SIGABRT: an abort, such as a stack overflow",
        "SIGABRT: 中断。スタックオーバーフローなど",
    ),
    (
        "SIGSEGV: an invalid memory access",
        "SIGSEGV: 不正なメモリアクセス",
    ),
    (
        "SIGXFSZ: it wrote more than the file size limit",
        "SIGXFSZ: ファイルサイズの上限を超えて書き込んだ",
    ),
    (
        "SIGXCPU: it used more than the CPU time limit",
        "SIGXCPU: CPU 時間の上限を超えた",
    ),
    ("a signal", "シグナル"),
    // python/fencelab_server.py: a ValueError for valid arguments.
    (
        "{error} (raised although every argument is valid)",
        "{error}（引数はどれも正しいのに上がりました）",
    ),
    ("the test", "テスト"),
    ("the implementation", "実装"),
];

/// `text` as one of `table`'s entries fills it, in Japanese: each hole's
/// value translated as one of `PARTS` where it is one (`{how}`: "exited with
/// status 1", `{who}`: "the test"). Any other value is kept as it was: a
/// function's name, a path, a number, the learner's own text.
fn in_japanese(table: &[(&str, &str)], text: &str) -> Option<String> {
    table.iter().find_map(|(en, ja)| {
        let values: std::collections::BTreeMap<String, String> = holes(en, text)?
            .into_iter()
            .map(|(name, value)| {
                let value = in_japanese(PARTS, value).unwrap_or_else(|| value.to_string());
                (name, value)
            })
            .collect();
        let values = values
            .iter()
            .map(|(name, value)| (name.clone(), value.as_str()))
            .collect();
        Some(fill(ja, &values))
    })
}

/// `message` in `lang`: each line that is one of fencelab's own sentences
/// translated, every other line as it was.
pub(crate) fn translate(message: &str, lang: Lang) -> String {
    if lang == Lang::En {
        return message.to_string();
    }
    message
        .lines()
        .map(|l| in_japanese(LINES, l).unwrap_or_else(|| l.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::protocol::{IMPL_PANICKED, PROCESS_ENDED};
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    /// Each message as the code that writes it writes it, in Japanese: no
    /// English of fencelab's left, its values kept.
    #[test]
    fn fencelabs_own_messages_read_in_japanese_with_their_values() {
        let describe = |raw| crate::bridge::client::describe(ExitStatus::from_raw(raw));
        use crate::engine::outcome::{TestOutcome, TimeRule};
        let spun = TestOutcome::TimedOut {
            limit_secs: 10.0,
            stopped_by: TimeRule::Spins,
            rule_secs: Some(0.5),
            confirmed: true,
        };
        let waited = TestOutcome::TimedOut {
            limit_secs: 10.0,
            stopped_by: TimeRule::Waits,
            rule_secs: Some(2.0),
            confirmed: false,
        };
        let cases = [
            (
                format!("{PROCESS_ENDED} {} during init_db()", describe(1 << 8)),
                "fencelab: 実装のプロセスが init_db() の途中で終了ステータス 1 で終了しました",
            ),
            (
                format!("{PROCESS_ENDED} {} during claim()", describe(libc::SIGABRT)),
                "fencelab: 実装のプロセスが claim() の途中でシグナル 6（SIGABRT: 中断。スタックオーバーフローなど）で終了させられました",
            ),
            (
                format!("{PROCESS_ENDED} {} during renew()", describe(libc::SIGKILL)),
                "fencelab: 実装のプロセスが renew() の途中でシグナル 9（SIGKILL）で終了させられました",
            ),
            (
                format!(
                    "{PROCESS_ENDED} took the judge down: the judge {}",
                    describe(libc::SIGSEGV)
                ),
                "fencelab: 実装のプロセスがジャッジを巻き込みました: ジャッジがシグナル 11（SIGSEGV: 不正なメモリアクセス）で終了させられました",
            ),
            (
                format!("{IMPL_PANICKED} in claim() at lease.rs:12:5:"),
                "fencelab: 実装が claim() の中でパニックしました（場所: lease.rs:12:5）:",
            ),
            (
                "fencelab: the implementation failed in claim() at lease.py:3:".to_string(),
                "fencelab: 実装が claim() の中で失敗しました（場所: lease.py:3）:",
            ),
            (
                "the implementation returned an error the contract does not have: \
                 ValueError: jobs (raised although every argument is valid)"
                    .to_string(),
                "実装が契約にないエラーを返しました: ValueError: jobs（引数はどれも正しいのに上がりました）",
            ),
            (
                crate::bridge::client::LEFT_BEHIND.to_string(),
                "fencelab: 実装がテストの後もプロセスを動かしたままにしていました。それらは終了させました",
            ),
            (
                crate::engine::runner::TEST_LEFT_BEHIND.to_string(),
                "fencelab: テストが終わった後もプロセスを動かしたままにしていました。それらは終了させました",
            ),
            (
                crate::engine::outcome::TestOutcome::timed_out(2.0)
                    .message()
                    .unwrap(),
                "テストが制限時間 2.0 秒のうちに終わらなかったため、終了させました",
            ),
            (
                spun.message().unwrap(),
                "実装がこのテストで CPU 時間を 0.5 秒を超えて使ったため（終わらない計算）、停止させました\n\
                 確認済み: ほかのテストの後に単独で実行し直しても、同じく停止しました",
            ),
            (
                waited.message().unwrap(),
                "テストのプロセスがどれも動かないまま合わせて 2.0 秒待ったため（スリープか、誰も解放しないロック）、停止させました",
            ),
            (
                crate::engine::runner::out_of_memory("the test"),
                "fencelab: テストがメモリを使い果たしました。そのプロセスが合わせて 1024 MiB を超えて使ったため、カーネルが終了させました",
            ),
        ];
        for (en, ja) in cases {
            assert_eq!(translate(&en, Lang::Ja), ja, "{en}");
            assert_eq!(translate(&en, Lang::En), en);
        }
    }

    /// Only whole lines of fencelab's own change: the learner's output and
    /// Python's traceback around them are as they were.
    #[test]
    fn a_learners_lines_are_left_as_they_are() {
        let message = "fencelab: the implementation failed in claim() at lease.py:3:\n\
                       TypeError: the test left processes running\n\
                       exited with status 1 (my own print)";
        let ja = translate(message, Lang::Ja);
        let lines: Vec<&str> = ja.lines().collect();
        assert_eq!(
            lines,
            [
                "fencelab: 実装が claim() の中で失敗しました（場所: lease.py:3）:",
                "TypeError: the test left processes running",
                "exited with status 1 (my own print)",
            ]
        );
    }

    /// Every entry's Japanese has the holes of its English.
    #[test]
    fn each_translation_has_the_holes_of_its_english() {
        let names = |t: &str| -> Vec<String> {
            t.split('{')
                .skip(1)
                .filter_map(|s| s.split_once('}').map(|(n, _)| n.to_string()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        for (en, ja) in LINES.iter().chain(PARTS) {
            assert_eq!(names(en), names(ja), "{en}");
        }
    }
}
