// onnxruntime's CPU latency on the corpus models, the reference of bench_exec (docs/BENCHMARKS.md
// "Execution on the CPU"). Not built: a Node.js script run from a folder where the npm package
// onnxruntime-node is installed (bench/README.md):
//   node ort_latency.mjs CORPUS_DIR [THREADS] [--models a,b,c] [--runs N] [--warmup N]
// For each model: a session with THREADS intra-op threads (default 1) and one inter-op thread,
// sequential execution, all graph optimizations (onnxruntime's default); inputs read from
// CORPUS_DIR/testdata/MODEL/test_data_set_0/input_N.pb (TensorProto); WARMUP runs (default 5),
// then RUNS timed runs of session.run (default 30). Prints one line per model in bench_exec's
// form, times in milliseconds:
//   MODEL<TAB>onnxruntime<TAB>median_ms=..<TAB>min_ms=..<TAB>cpu_median_ms=..<TAB>threads=N<TAB>ort=VERSION
// cpu_median_ms: the median of the runs' CPU time of the whole process (process.cpuUsage, user +
// system), bench_exec's cpu_median_ms for a process whose only busy thread is the intra-op one;
// less sensitive than wall time to other processes taking the cores on a busy machine.
// Exit status: 0, 1 when a model is missing or fails, 2 for a usage error.
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(join(process.cwd(), 'package.json'));

function usage(why) {
    process.stderr.write(`ort_latency: ${why}\n` +
        'usage: node ort_latency.mjs CORPUS_DIR [THREADS] [--models a,b,c] [--runs N] [--warmup N]\n');
    process.exit(2);
}

const args = process.argv.slice(2);
let corpus = null, threads = 1, runs = 30, warmup = 5;
let models = ['mlp', 'transformer_encoder_layer', 'squeezenet1_1', 'mobilenet_v2', 'resnet18'];
const positiveInt = (name, v) => {
    if (!/^[0-9]+$/.test(v ?? '') || Number(v) < 1) usage(`${name} needs a positive integer, got '${v}'`);
    return Number(v);
};
for (let i = 0; i < args.length; ++i) {
    const a = args[i];
    if (a === '--models') models = (args[++i] ?? '').split(',').filter((m) => m);
    else if (a === '--runs') runs = positiveInt(a, args[++i]);
    else if (a === '--warmup') warmup = Number(args[++i] ?? 'x');
    else if (a === '--help') {
        process.stdout.write('usage: node ort_latency.mjs CORPUS_DIR [THREADS] [--models a,b,c] [--runs N] [--warmup N]\n');
        process.exit(0);
    } else if (a.startsWith('--')) usage(`unknown option '${a}'`);
    else if (corpus === null) corpus = a;
    else threads = positiveInt('THREADS', a);
}
if (corpus === null) usage('CORPUS_DIR is required');
if (!existsSync(corpus)) usage(`corpus folder '${corpus}' does not exist`);
if (!Number.isInteger(warmup) || warmup < 0) usage('--warmup needs an integer >= 0');
if (models.length === 0) usage('--models needs at least one model');

let ort;
try {
    ort = require('onnxruntime-node');
} catch (e) {
    usage(`cannot load onnxruntime-node from ${process.cwd()} (npm install onnxruntime-node there): ${e.message}`);
}

// ---- TensorProto (onnx.proto3): the fields test data files use
function readVarint(buf, pos) {
    let v = 0n, shift = 0n;
    for (;;) {
        if (pos.i >= buf.length) throw new Error('truncated varint');
        const b = buf[pos.i++];
        v |= BigInt(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
        shift += 7n;
    }
}
const ELEM = { 1: ['float32', Float32Array, 4], 2: ['uint8', Uint8Array, 1], 3: ['int8', Int8Array, 1],
    5: ['int16', Int16Array, 2], 6: ['int32', Int32Array, 4], 7: ['int64', BigInt64Array, 8],
    9: ['bool', Uint8Array, 1], 11: ['float64', Float64Array, 8] };
function parseTensorProto(buf, file) {
    const pos = { i: 0 };
    const dims = [], packed = { 4: [], 5: [], 7: [], 10: [] };
    let dataType = 0, raw = null;
    while (pos.i < buf.length) {
        const key = Number(readVarint(buf, pos)), field = key >> 3, wire = key & 7;
        if (wire === 0) {
            const v = readVarint(buf, pos);
            if (field === 1) dims.push(Number(v));
            else if (field === 2) dataType = Number(v);
            else if (packed[field]) packed[field].push(v);
        } else if (wire === 2) {
            const len = Number(readVarint(buf, pos)), body = buf.subarray(pos.i, pos.i + len);
            pos.i += len;
            if (field === 9) raw = body;
            else if (field === 1 || packed[field]) { // packed repeated values
                const p = { i: 0 };
                const dv = new DataView(body.buffer, body.byteOffset, body.byteLength);
                while (p.i < body.length) {
                    if (field === 4) { packed[4].push(dv.getFloat32(p.i, true)); p.i += 4; }
                    else if (field === 10) { packed[10].push(dv.getFloat64(p.i, true)); p.i += 8; }
                    else { const v = readVarint(body, p); (field === 1 ? dims : packed[field]).push(field === 1 ? Number(v) : v); }
                }
            }
        } else if (wire === 5) pos.i += 4;
        else if (wire === 1) pos.i += 8;
        else throw new Error(`${file}: unsupported wire type ${wire}`);
    }
    const e = ELEM[dataType];
    if (!e) throw new Error(`${file}: element type ${dataType} is not supported`);
    const [type, Arr, size] = e;
    const n = dims.reduce((a, b) => a * b, 1);
    let data;
    if (raw) {
        if (raw.length !== n * size) throw new Error(`${file}: raw_data has ${raw.length} bytes, ${n * size} expected`);
        data = new Arr(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
    } else {
        const src = type === 'float32' ? packed[4] : type === 'float64' ? packed[10] : type === 'int64' ? packed[7] : packed[5];
        data = Arr.from(src, (v) => (type === 'int64' ? BigInt.asIntN(64, BigInt(v)) : Number(v)));
    }
    return new ort.Tensor(type, data, dims);
}

function median(v) {
    const s = [...v].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const version = ort.env?.versions?.common ?? require('onnxruntime-node/package.json').version;
process.stdout.write(`ort_latency: onnxruntime-node ${version}, ${threads} intra-op thread(s), ` +
    `median of ${runs} runs after ${warmup} warm-ups\n`);
let failed = false;
for (const m of models) {
    const file = join(corpus, `${m}.onnx`);
    if (!existsSync(file)) {
        process.stdout.write(`${m}\tmissing\t${file}\n`);
        failed = true;
        continue;
    }
    try {
        const session = await ort.InferenceSession.create(file, {
            intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
            graphOptimizationLevel: 'all', executionProviders: ['cpu'] });
        const dir = join(corpus, 'testdata', m, 'test_data_set_0');
        const files = readdirSync(dir).filter((f) => /^input_\d+\.pb$/.test(f))
            .sort((a, b) => Number(a.match(/\d+/)[0]) - Number(b.match(/\d+/)[0]));
        if (files.length !== session.inputNames.length)
            throw new Error(`${dir} has ${files.length} inputs, the model takes ${session.inputNames.length}`);
        const feeds = {};
        session.inputNames.forEach((name, i) => { feeds[name] = parseTensorProto(readFileSync(join(dir, files[i])), files[i]); });
        for (let i = 0; i < warmup; ++i) await session.run(feeds);
        const times = [], cpu = [];
        for (let i = 0; i < runs; ++i) {
            const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
            await session.run(feeds);
            times.push(Number(process.hrtime.bigint() - t0) / 1e6);
            const c = process.cpuUsage(c0);
            cpu.push((c.user + c.system) / 1e3);
        }
        process.stdout.write(`${m}\tonnxruntime\tmedian_ms=${median(times).toFixed(3)}\t` +
            `min_ms=${Math.min(...times).toFixed(3)}\tcpu_median_ms=${median(cpu).toFixed(3)}\t` +
            `threads=${threads}\tort=${version}\n`);
        await session.release?.();
    } catch (e) {
        process.stdout.write(`${m}\terror\t${e.message}\n`);
        failed = true;
    }
}
process.exit(failed ? 1 : 0);
