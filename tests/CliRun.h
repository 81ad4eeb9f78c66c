#pragma once
// Runs the real passlens-cli (PASSLENS_CLI) as a process for the CLI test executables (tst_cli,
// tst_cli_messages): exit status, stdout and stderr, with a hang guard.
#include <QProcess>
#include <QString>
#include <QStringList>

#include <functional>

namespace {
constexpr int kTimeoutMs = 600000; // a hang guard only: far above any run on a loaded machine

struct Run {
    int exitCode = -1;
    QProcess::ExitStatus exitStatus = QProcess::CrashExit;
    QByteArray out;
    QByteArray err;
    bool finished = false;
    QString describe() const {
        return QString("exit %1 (%2)\nstdout: %3\nstderr: %4")
            .arg(exitCode)
            .arg(exitStatus == QProcess::NormalExit ? "normal" : "crash")
            .arg(QString::fromUtf8(out.left(2000)), QString::fromUtf8(err.left(2000)));
    }
};

// Runs passlens-cli; `childSetup` runs in the child before exec (resource limits), `env` adds
// NAME=VALUE entries to the environment.
inline Run runCliWith(const QStringList& args, std::function<void()> childSetup, const QStringList& env = {}) {
    QProcess p;
    p.setProgram(QStringLiteral(PASSLENS_CLI));
    p.setArguments(args);
    if (childSetup) p.setChildProcessModifier(std::move(childSetup));
    if (!env.isEmpty()) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
        p.setProcessEnvironment(e);
    }
    p.start();
    Run r;
    if (!p.waitForStarted(kTimeoutMs)) return r;
    r.finished = p.waitForFinished(kTimeoutMs);
    if (!r.finished) {
        p.kill();
        p.waitForFinished(5000);
    }
    r.exitCode = p.exitCode();
    r.exitStatus = p.exitStatus();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

inline Run runCli(const QStringList& args) { return runCliWith(args, {}); }

} // namespace
