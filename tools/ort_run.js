#!/usr/bin/env node
// Runs one ONNX model in ONNX Runtime (onnxruntime-node, CPU) on .npy inputs.
//
//   node tools/ort_run.js RUN_DIR
//     RUN_DIR/request.json  {"model": "/abs/model.onnx", "inputs": [{"name": "x", "file": "in0.npy"}, ...]}
//                           (an input with name "" is the model's input at that position)
//     writes RUN_DIR/out0.npy, out1.npy ... and RUN_DIR/response.json:
//       {"outputs": [{"name": "y", "file": "out0.npy", "dtype": "float32", "shape": [1, 10]}, ...]}
//     on failure RUN_DIR/response.json is {"error": "message"} and the exit code is 1.
//
//   node tools/ort_run.js --info MODEL
//     prints {"inputs": [...names], "outputs": [...names]} as JSON.
//
// Input files are relative to RUN_DIR unless absolute. Only onnxruntime-node is required
// (install it with tools/setup.sh, which runs `npm ci --ignore-scripts`).
'use strict';

const fs = require('fs');
const path = require('path');

// dtype name (as in oxport's tensor.h) -> .npy descr, element size, ORT type, typed array.
const DTYPES = {
  float32: { descr: '<f4', size: 4, ort: 'float32', array: Float32Array },
  float64: { descr: '<f8', size: 8, ort: 'float64', array: Float64Array },
  float16: { descr: '<f2', size: 2, ort: 'float16', array: Uint16Array },
  int8: { descr: '|i1', size: 1, ort: 'int8', array: Int8Array },
  uint8: { descr: '|u1', size: 1, ort: 'uint8', array: Uint8Array },
  int16: { descr: '<i2', size: 2, ort: 'int16', array: Int16Array },
  int32: { descr: '<i4', size: 4, ort: 'int32', array: Int32Array },
  int64: { descr: '<i8', size: 8, ort: 'int64', array: BigInt64Array },
  bool: { descr: '|b1', size: 1, ort: 'bool', array: Uint8Array },
};

// Returns [dtype name, big-endian?] for a .npy descr such as '<f4', '|b1' or '>i8'.
function dtypeFromDescr(descr, file) {
  const m = /^([<>|=]?)([fiub])(\d)$/.exec(descr);
  const map = { f4: 'float32', f8: 'float64', f2: 'float16', i1: 'int8', u1: 'uint8',
    i2: 'int16', i4: 'int32', i8: 'int64', b1: 'bool' };
  const name = m ? map[m[2] + m[3]] : undefined;
  if (!name) {
    throw new Error(`${file}: unsupported .npy dtype '${descr}'; ` +
      'use one of float32, float64, float16, int8, uint8, int16, int32, int64, bool');
  }
  return [name, m[1] === '>'];
}

// Parses the Python dict literal of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
function parseHeader(text, file) {
  const bad = (why) => new Error(`${file}: malformed .npy header (${why}): ${text.trim()}`);
  const descr = /['"]descr['"]\s*:\s*['"]([^'"]*)['"]/.exec(text);
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(text);
  const shape = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text);
  if (!descr) throw bad("no 'descr' string; structured dtypes are not supported");
  if (!fortran) throw bad("no 'fortran_order'");
  if (!shape) throw bad("no 'shape' tuple");
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((s) => {
    if (!/^\d+$/.test(s.replace(/L$/, ''))) throw bad(`shape entry '${s}' is not a non-negative integer`);
    return Number(s.replace(/L$/, ''));
  });
  return { descr: descr[1], fortran: fortran[1] === 'True', shape: dims };
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const magic = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY
  if (buf.length < 10 || !buf.subarray(0, 6).equals(magic)) {
    throw new Error(`${file}: not a .npy file (bad magic); write it with numpy.save`);
  }
  const major = buf[6];
  let headerLen;
  let offset;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    offset = 10;
  } else if (major === 2 || major === 3) {
    if (buf.length < 12) throw new Error(`${file}: truncated .npy header`);
    headerLen = buf.readUInt32LE(8);
    offset = 12;
  } else {
    throw new Error(`${file}: unsupported .npy format version ${major}.${buf[7]} (1.0, 2.0 and 3.0 are read)`);
  }
  if (offset + headerLen > buf.length) throw new Error(`${file}: truncated .npy header`);
  const header = parseHeader(buf.toString(major === 3 ? 'utf8' : 'latin1', offset, offset + headerLen), file);
  const [dtype, bigEndian] = dtypeFromDescr(header.descr, file);
  const info = DTYPES[dtype];
  const numel = header.shape.reduce((a, b) => a * b, 1);
  const dataStart = offset + headerLen;
  const nbytes = numel * info.size;
  if (buf.length - dataStart < nbytes) {
    throw new Error(`${file}: truncated data: shape [${header.shape.join(', ')}] of ${dtype} needs ` +
      `${nbytes} bytes, the file has ${buf.length - dataStart}`);
  }
  // Copy into a fresh, aligned buffer (the header length does not guarantee alignment).
  let bytes = new Uint8Array(nbytes);
  bytes.set(buf.subarray(dataStart, dataStart + nbytes));
  if (bigEndian && info.size > 1) bytes = byteswap(bytes, info.size);
  if (header.fortran && header.shape.length > 1) bytes = fortranToC(bytes, header.shape, info.size);
  return { dtype, shape: header.shape, data: new info.array(bytes.buffer, 0, numel) };
}

function byteswap(bytes, size) {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i += size) {
    for (let k = 0; k < size; ++k) out[i + k] = bytes[i + size - 1 - k];
  }
  return out;
}

function fortranToC(bytes, shape, size) {
  const out = new Uint8Array(bytes.length);
  const n = shape.length;
  const fstride = new Array(n);
  let s = 1;
  for (let k = 0; k < n; ++k) { fstride[k] = s; s *= shape[k]; }
  const idx = new Array(n).fill(0);
  const numel = bytes.length / size;
  for (let c = 0; c < numel; ++c) {
    let f = 0;
    for (let k = 0; k < n; ++k) f += idx[k] * fstride[k];
    out.set(bytes.subarray(f * size, f * size + size), c * size);
    for (let k = n - 1; k >= 0; --k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

function shapeRepr(shape) {
  if (shape.length === 0) return '()';
  if (shape.length === 1) return `(${shape[0]},)`;
  return `(${shape.join(', ')})`;
}

function npyBytes(dtype, shape, data) {
  const info = DTYPES[dtype];
  let header = `{'descr': '${info.descr}', 'fortran_order': False, 'shape': ${shapeRepr(shape)}, }`;
  // Pad with spaces and a newline so the data starts at a multiple of 64 bytes.
  const pre = 10;
  const total = Math.ceil((pre + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - pre - header.length - 1) + '\n';
  const head = Buffer.alloc(pre);
  head.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), body]);
}

function writeFileAtomic(file, bytes) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}

// OXPORT_ORT_PACKAGE names another installed package to load instead (package.json installs
// the newest release beside the pinned one as onnxruntime-node-next, for the tests).
function loadOrt() {
  const pkg = process.env.OXPORT_ORT_PACKAGE || 'onnxruntime-node';
  try {
    return require(pkg);
  } catch (e) {
    throw new Error(`cannot load ${pkg} (${e.message.split('\n')[0]}); ` +
      'run tools/setup.sh (npm ci --ignore-scripts) in the oxport source tree');
  }
}

async function createSession(ort, model) {
  if (!fs.existsSync(model)) throw new Error(`model file not found: ${model}`);
  try {
    return await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      logSeverityLevel: 3,
    });
  } catch (e) {
    throw new Error(`ONNX Runtime cannot load ${model}: ${e.message}`);
  }
}

async function run(runDir) {
  const reqFile = path.join(runDir, 'request.json');
  let request;
  try {
    request = JSON.parse(fs.readFileSync(reqFile, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read ${reqFile}: ${e.message}`);
  }
  if (typeof request.model !== 'string') throw new Error(`${reqFile}: "model" must be a path string`);
  if (!Array.isArray(request.inputs)) throw new Error(`${reqFile}: "inputs" must be an array`);

  const ort = loadOrt();
  const session = await createSession(ort, request.model);

  const feeds = {};
  for (const [index, input] of request.inputs.entries()) {
    if (typeof input.name !== 'string' || typeof input.file !== 'string') {
      throw new Error(`${reqFile}: every input needs "name" and "file" strings`);
    }
    // An empty name means "the model's input at this position" (inputs the caller did not name).
    if (input.name === '') {
      if (index >= session.inputNames.length) {
        throw new Error(`input ${index} has no name and the model has only ${session.inputNames.length} inputs`);
      }
      input.name = session.inputNames[index];
    }
    if (!session.inputNames.includes(input.name)) {
      throw new Error(`the model has no input named '${input.name}'; its inputs are: ${session.inputNames.join(', ')}`);
    }
    const file = path.isAbsolute(input.file) ? input.file : path.join(runDir, input.file);
    const t = readNpy(file);
    feeds[input.name] = new ort.Tensor(DTYPES[t.dtype].ort, t.data, t.shape);
  }
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length > 0) throw new Error(`no value given for model input(s): ${missing.join(', ')}`);

  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    throw new Error(`ONNX Runtime failed to run ${request.model}: ${e.message}`);
  }

  const outputs = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    if (!(t.type in DTYPES)) {
      throw new Error(`output '${name}' has type ${t.type}, which oxport cannot compare`);
    }
    const file = `out${i}.npy`;
    const shape = t.dims.map(Number);
    writeFileAtomic(path.join(runDir, file), npyBytes(t.type, shape, t.data));
    outputs.push({ name, file, dtype: t.type, shape });
  });
  return { outputs };
}

async function info(model) {
  const ort = loadOrt();
  const session = await createSession(ort, model);
  return { inputs: session.inputNames, outputs: session.outputNames };
}

const USAGE = 'usage: node ort_run.js RUN_DIR | node ort_run.js --info MODEL.onnx';

async function main(argv) {
  if (argv.length === 2 && argv[0] === '--info') {
    try {
      process.stdout.write(`${JSON.stringify(await info(argv[1]))}\n`);
      return 0;
    } catch (e) {
      process.stderr.write(`ort_run: ${e.message}\n`);
      return 1;
    }
  }
  if (argv.length !== 1 || argv[0].startsWith('-')) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const runDir = argv[0];
  if (!fs.existsSync(runDir) || !fs.statSync(runDir).isDirectory()) {
    process.stderr.write(`ort_run: run directory not found: ${runDir}\n${USAGE}\n`);
    return 2;
  }
  const responseFile = path.join(runDir, 'response.json');
  try {
    const response = await run(runDir);
    writeFileAtomic(responseFile, `${JSON.stringify(response)}\n`);
    return 0;
  } catch (e) {
    const message = e && e.message ? e.message : String(e);
    process.stderr.write(`ort_run: ${message}\n`);
    writeFileAtomic(responseFile, `${JSON.stringify({ error: message })}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
