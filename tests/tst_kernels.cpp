// passlens_kernels: CUDA device discovery. Runs with and without CUDA and with and without a
// device; deviceIsUsable is registered separately under the `gpu` label.
#include <passlens/kernels/DeviceInfo.h>

#include <QTest>

class TestKernels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void queryDoesNotCrash() {
        const passlens::DeviceInfo info = passlens::queryDevices();
        QVERIFY(info.deviceCount >= 0);
        QCOMPARE(info.cudaCompiled, PASSLENS_HAVE_CUDA == 1);
        if (!info.cudaCompiled) {
            QCOMPARE(info.deviceCount, 0);
        }
        // A second query must give the same answer (no sticky runtime state).
        const passlens::DeviceInfo again = passlens::queryDevices();
        QCOMPARE(again.deviceCount, info.deviceCount);
        QCOMPARE(again.name, info.name);
    }

    void noDeviceMeansError() {
        const passlens::DeviceInfo info = passlens::queryDevices();
        if (info.deviceCount == 0) {
            QVERIFY2(!info.error.empty(), "deviceCount == 0 but error is empty");
            QVERIFY(info.name.empty());
        }
    }

    void deviceIsUsable() {
        const passlens::DeviceInfo info = passlens::queryDevices();
        if (info.deviceCount == 0) {
            QSKIP(qPrintable(QString::fromStdString(info.error)));
        }
        QVERIFY(info.cudaCompiled);
        QVERIFY2(info.error.empty(), info.error.c_str());
        QVERIFY(!info.name.empty());
        qInfo("device 0: %s (%d device(s))", info.name.c_str(), info.deviceCount);
    }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
