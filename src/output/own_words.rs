//! fencelab's own words in a failing test's message, in the learner's
//! language. The bridge and the runner say why a test failed for something
//! other than an observation as `bridge::said::Said` values, kept as marked
//! lines of a message; every one is worded here, never matched as English.
//! A learner's own output and Python's traceback around them are untouched.
//! The suite's observations have their own table (`lab::observation::translate`).

use crate::bridge::said::{self, How, Said, Who};
use crate::lab::lang::Lang;

/// `message` with each of fencelab's sentences worded in `lang`, every other
/// line as it was.
pub(crate) fn word(message: &str, lang: Lang) -> String {
    said::word_each(message, |s| words(s, lang))
}

/// One of fencelab's sentences in `lang`.
pub(crate) fn words(said: &Said, lang: Lang) -> String {
    match lang {
        Lang::En => said.to_string(),
        Lang::Ja => japanese(said),
    }
}

fn japanese(said: &Said) -> String {
    match said {
        Said::ProcessEnded { call, how } => {
            format!("fencelab: 実装のプロセスが {call}() の途中で{}", how_ja(how))
        }
        Said::CouldNotStart { why } => {
            format!("fencelab: 実装のプロセスを起動できませんでした: {why}")
        }
        Said::TookJudgeDown { how } => format!(
            "fencelab: 実装のプロセスがジャッジを巻き込みました: ジャッジが{}",
            how_ja(how)
        ),
        Said::StreamsCut { kib, dropped } => format!(
            "（各ストリームの最初の {kib} KiB を上に示しました。残りの {dropped} バイトは省きました）"
        ),
        Said::FailedInCall { call, at, panicked } => {
            let verb = if *panicked {
                "パニックしました"
            } else {
                "失敗しました"
            };
            let at = at
                .as_ref()
                .map(|a| format!("（場所: {a}）"))
                .unwrap_or_default();
            format!("fencelab: 実装が {call}() の中で{verb}{at}:")
        }
        Said::NotInContract { error, valid } => {
            let valid = if *valid {
                "（引数はどれも正しいのに上がりました）"
            } else {
                ""
            };
            format!("実装が契約にないエラーを返しました: {error}{valid}")
        }
        Said::LeftRunning {
            who: Who::Implementation,
        } => "fencelab: 実装がテストの後もプロセスを動かしたままにしていました。それらは終了させました"
            .to_string(),
        Said::LeftRunning { who: Who::Test } => {
            "fencelab: テストが終わった後もプロセスを動かしたままにしていました。それらは終了させました"
                .to_string()
        }
        Said::SpaceUsedUp { who, mib } => format!(
            "fencelab: {}が試行のディレクトリに {mib} MiB（またはファイル数の上限）を超えて書き込みました。超えた分は拒否されました",
            who_ja(*who)
        ),
        Said::OutOfMemory { who, mib } => format!(
            "fencelab: {}がメモリを使い果たしました。そのプロセスが合わせて {mib} MiB を超えて使ったため、カーネルが終了させました",
            who_ja(*who)
        ),
        Said::OutputDropped { bytes } => format!("[... 出力のうち {bytes} バイトを省きました]"),
        Said::TimedOut { secs } => {
            format!("テストが制限時間 {secs:.1} 秒のうちに終わらなかったため、終了させました")
        }
        Said::Spun { secs } => format!(
            "実装が答えを返すまでに CPU を {secs:.1} 秒を超えて使ったため（終わらない計算）、停止させました"
        ),
        Said::Waited { secs } => format!(
            "テストのプロセスがどれも動かないまま合わせて {secs:.1} 秒待ったため（スリープか、誰も解放しないロック）、停止させました"
        ),
        Said::Confirmed => {
            "確認済み: ほかのテストの後に単独で実行し直しても、同じく停止しました".to_string()
        }
        Said::NoVerdict => {
            "ジャッジは成功として終了しましたが、テストの合格を報告しませんでした".to_string()
        }
        Said::SaidNothing { status } => {
            format!("ジャッジが {status} で終了し、何も報告しませんでした")
        }
    }
}

/// How a process ended, as the rest of a Japanese sentence.
fn how_ja(how: &How) -> String {
    match how {
        How::Exited { code } => format!("終了ステータス {code} で終了しました"),
        How::Signal { signal } => {
            format!(
                "シグナル {signal}（{}）で終了させられました",
                signal_ja(*signal)
            )
        }
        How::Flooded { mib, streams } => format!(
            "{} に {mib} MiB を超えて出力したため終了させられました",
            streams.join(" and ")
        ),
        How::AnswerTooLong { mib } => {
            format!("応答しなくなりました（{mib} MiB を超える答えを送ってきました）")
        }
        How::StoppedAnswering { why } => format!("応答しなくなりました（{why}）"),
        How::Ended { status } => format!("終了しました（{status}）"),
    }
}

/// A signal's name, and what it means where a learner can act on it.
fn signal_ja(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => "SIGABRT: 中断。スタックオーバーフローなど",
        libc::SIGSEGV => "SIGSEGV: 不正なメモリアクセス",
        libc::SIGXFSZ => "SIGXFSZ: ファイルサイズの上限を超えて書き込んだ",
        libc::SIGXCPU => "SIGXCPU: CPU 時間の上限を超えた",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        _ => "シグナル",
    }
}

fn who_ja(who: Who) -> &'static str {
    match who {
        Who::Implementation => "実装",
        Who::Test => "テスト",
    }
}

#[cfg(test)]
mod tests;
