// rbd3d: the book's 3-D viewer. It places the shapes of a scene at the poses that rbdlearn
// computed (the scene JSON of rbdlearn/viz/scene3d.py, version 1) and computes no kinematics.
// mount(element, scene) builds one view in a div.rbd3d; mountAll() mounts every such div of a
// page with the JSON it holds. `make viewer` bundles this module with three.js into
// rbdlearn/viz/rbd3d.js (esbuild); the book serves that bundle as _static/offline/rbd3d/.
import {
  AmbientLight, BoxGeometry, BufferAttribute, BufferGeometry, CapsuleGeometry, Color,
  ConeGeometry, CylinderGeometry, DirectionalLight, GridHelper, Group, Matrix4, Mesh,
  MeshStandardMaterial, PerspectiveCamera, Quaternion, Scene, SphereGeometry, Box3, Vector3,
  WebGLRenderer,
} from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";

const SPEEDS = [0.25, 0.5, 1, 2];
const SVG = "http://www.w3.org/2000/svg";
const PLOT_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
  "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
// the layout of a view, added to the page once (the book and JupyterLab alike); on paper the
// still image stands in for the canvas and the controls
const STYLE = `
.rbd3d { max-width: 100%; margin: 0.5rem 0; }
.rbd3d .rbd3d-view { display: flex; flex-direction: column; gap: 0.3rem; max-width: 100%; }
.rbd3d canvas.rbd3d-canvas { display: block; box-sizing: border-box; width: 100%;
  border: 1px solid #ccd; border-radius: 4px; touch-action: none; }
.rbd3d canvas.rbd3d-canvas:focus-visible { outline: 2px solid #1f77b4; }
.rbd3d .rbd3d-controls { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0.6rem;
  font-size: 0.85rem; }
.rbd3d .rbd3d-controls label { display: flex; flex-wrap: wrap; align-items: center;
  gap: 0.3rem; flex: 1 1 12rem; min-width: 0; white-space: nowrap; }
/* a slider's basis is its least width, so its label, slider and value wrap onto two lines
   only in a column too narrow for the three; otherwise the slider takes the room left */
.rbd3d .rbd3d-controls input[type=range] { flex: 1 1 4rem; min-width: 4rem; }
.rbd3d .rbd3d-controls output { min-width: 4.5em; font-variant-numeric: tabular-nums; }
.rbd3d .rbd3d-readout { font-size: 0.85rem; font-family: monospace; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.rbd3d svg.rbd3d-plot { max-width: 100%; display: block; font-family: sans-serif; }
.rbd3d .rbd3d-nowebgl { font-size: 0.8rem; font-style: italic; }
.rbd3d .rbd3d-error { color: #b00020; font-size: 0.85rem; }
.rbd3d img.rbd3d-still { max-width: 100%; height: auto; }
@media screen { .rbd3d.rbd3d-mounted > img.rbd3d-still { display: none; } }
@media print { .rbd3d .rbd3d-view, .rbd3d .rbd3d-nowebgl, .rbd3d .rbd3d-error {
  display: none; } }
`;

function addStyle(doc) {
  if (doc.getElementById("rbd3d-style")) return;
  const style = doc.createElement("style");
  style.id = "rbd3d-style";
  style.textContent = STYLE;
  doc.head.appendChild(style);
}

class SceneError extends Error {}

function fail(message) {
  throw new SceneError(message);
}

function bytesOf(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

// little-endian float32 (or float64) values from base64, checked against the count wanted
function floats(base64, count, what, Type = Float32Array) {
  if (typeof base64 !== "string") fail(`${what}: not a base64 string`);
  const bytes = bytesOf(base64);
  if (bytes.length !== count * Type.BYTES_PER_ELEMENT) {
    fail(`${what}: ${bytes.length / Type.BYTES_PER_ELEMENT} values, expected ${count}`);
  }
  const view = new DataView(bytes.buffer);
  const out = new Type(count);
  const read = Type === Float64Array ? (k) => view.getFloat64(8 * k, true)
    : (k) => view.getFloat32(4 * k, true);
  for (let k = 0; k < count; k++) out[k] = read(k);
  return out;
}

// ---- mesh packs (.rbdm): magic, header length, JSON header, quantized vertices, indices
const MAGIC = "RBDM1\0\0\0";

export function parsePack(buffer, name) {
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  if (bytes.length < 12 || String.fromCharCode(...bytes.subarray(0, 8)) !== MAGIC) {
    fail(`mesh pack ${name}: not an RBDM1 file`);
  }
  const length = view.getUint32(8, true);
  // (the header's zero padding may be counted in its length, or follow it)
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + length))
    .replace(/\0+$/, ""));
  const start = Math.ceil((12 + length) / 4) * 4;
  const meshes = {};
  for (const m of header.meshes) {
    const at = start + m.offset;
    const positions = new Float32Array(3 * m.vertices);
    for (let k = 0; k < 3 * m.vertices; k++) {
      positions[k] = m.min[k % 3] + m.step[k % 3] * view.getUint16(at + 2 * k, true);
    }
    const indexAt = at + Math.ceil((6 * m.vertices) / 4) * 4;
    const wide = m.index === "u32";
    const index = new (wide ? Uint32Array : Uint16Array)(3 * m.triangles);
    for (let k = 0; k < index.length; k++) {
      index[k] = wide ? view.getUint32(indexAt + 4 * k, true)
        : view.getUint16(indexAt + 2 * k, true);
      if (index[k] >= m.vertices) fail(`mesh pack ${name}: ${m.name} indexes a missing vertex`);
    }
    const geometry = new BufferGeometry();
    geometry.setAttribute("position", new BufferAttribute(positions, 3));
    geometry.setIndex(new BufferAttribute(index, 1));
    meshes[m.name] = geometry;
  }
  return meshes;
}

const packCache = new Map();     // one fetch per pack for the page

function loadPack(name, scene) {
  const inline = scene.inline_packs && scene.inline_packs[name];
  if (inline) return Promise.resolve(parsePack(bytesOf(inline).buffer, name));
  if (!packCache.has(name)) {
    const url = new URL(`meshes/${encodeURIComponent(name)}.rbdm`, import.meta.url);
    packCache.set(name, fetch(url).then((r) => {
      if (!r.ok) fail(`mesh pack ${name}: ${r.status} ${r.statusText} (${url})`);
      return r.arrayBuffer();
    }).then((buffer) => parsePack(buffer, name)));
  }
  return packCache.get(name);
}

// ---- shapes: three.js objects in the body frame (z is the axis of cylinders and arrows)
function along(geometry) {
  return geometry.rotateX(Math.PI / 2);      // three's round shapes lie along y
}

function shapeObject(shape, packs, where) {
  const material = new MeshStandardMaterial({
    color: new Color(shape.color || "#9aa4b1"), flatShading: true, metalness: 0.1,
    roughness: 0.75, transparent: (shape.opacity ?? 1) < 1, opacity: shape.opacity ?? 1,
  });
  const num = (key) => {
    const v = shape[key];
    if (typeof v !== "number" || !(v >= 0)) fail(`${where}: ${shape.type} needs ${key} >= 0`);
    return v;
  };
  let object;
  switch (shape.type) {
    case "mesh": {
      const geometry = packs[shape.pack] && packs[shape.pack][shape.mesh];
      if (!geometry) fail(`${where}: mesh ${shape.mesh} is not in pack ${shape.pack}`);
      object = new Mesh(geometry, material);
      break;
    }
    case "box": {
      const s = shape.size;
      if (!Array.isArray(s) || s.length !== 3) fail(`${where}: box needs size [a, b, c]`);
      object = new Mesh(new BoxGeometry(s[0], s[1], s[2]), material);
      break;
    }
    case "sphere":
      object = new Mesh(new SphereGeometry(num("radius"), 24, 16), material);
      break;
    case "cylinder":
      object = new Mesh(along(new CylinderGeometry(num("radius"), shape.radius,
        num("length"), 24)), material);
      break;
    case "capsule":
      object = new Mesh(along(new CapsuleGeometry(num("radius"), num("length"), 6, 16)),
        material);
      break;
    case "arrow": {
      // unit length along +z; the head keeps its size when the body is stretched along z
      const r = num("radius");
      const head = Math.min(0.5, 4 * r);
      const shaft = new Mesh(along(new CylinderGeometry(r, r, 1, 12)).translate(0, 0, 0.5),
        material);
      const tip = new Mesh(along(new ConeGeometry(2.2 * r, head, 16)).translate(0, 0, -head / 2),
        material);
      object = new Group();
      object.add(shaft, tip);
      object.userData.arrow = { shaft, tip, head };
      break;
    }
    default:
      fail(`${where}: unknown shape type ${JSON.stringify(shape.type)}`);
  }
  const o = shape.origin || [0, 0, 0, 1, 0, 0, 0];
  object.position.set(o[0], o[1], o[2]);
  object.quaternion.set(o[4], o[5], o[6], o[3]);
  if (shape.scale) object.scale.set(shape.scale[0], shape.scale[1], shape.scale[2]);
  return object;
}

// an arrow's head stays its own length while its body is scaled to length sz
function fitArrows(group, sz) {
  group.traverse((o) => {
    const a = o.userData.arrow;
    if (!a) return;
    const len = Math.max(Math.abs(sz), 1e-9);
    const h = Math.min(a.head, 0.5 * len) / len;   // the head's share of the unit length
    a.shaft.scale.z = 1 - h;
    a.tip.scale.z = h / a.head;
    a.tip.position.z = 1;
  });
}

// ---- the scene JSON, checked
function checkScene(scene) {
  if (!scene || scene.rbd3d !== 1) fail("not an rbd3d scene of version 1");
  const F = scene.scrub && scene.scrub.values && scene.scrub.values.length;
  if (!F) fail("scrub.values is empty");
  const B = (scene.bodies || []).length;
  if (!B) fail("the scene has no bodies");
  const R = scene.param ? scene.param.values.length : 1;
  if (!Array.isArray(scene.runs) || scene.runs.length !== R) {
    fail(`${(scene.runs || []).length} runs for ${R} parameter values`);
  }
  const runs = scene.runs.map((run, r) => ({
    poses: floats(run.poses, F * B * 7, `runs[${r}].poses`),
    scales: run.scales ? floats(run.scales, F * B * 3, `runs[${r}].scales`) : null,
    plots: run.plots || [],
    readout: run.readout || null,
  }));
  return { F, B, R, runs };
}

// ---- plots: one SVG per plot, its series over the scrub axis, and a cursor

// a value of an axis in at most about seven characters (2.84e-5, not 0.0000284)
function tickLabel(v) {
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2).replace("e-", "e−")
    : Number(v.toPrecision(3)).toString();
}
function makePlot(doc, plot, xs, width) {
  // drawn at the width it is shown at, so that its text keeps its size
  const W = Math.max(240, Math.round(width)), L = 50, Rt = 8, Bt = 10;
  // the legend beside the title where both fit, else on a line of its own below it
  const n = plot.series.length, title = plot.title || "";
  const twoRows = L + 7 * title.length + 44 * n > W - Rt;
  const T = twoRows ? 32 : 18, H = 122 + T, legendY = twoRows ? 28 : 12;
  const svg = doc.createElementNS(SVG, "svg");
  svg.setAttribute("class", "rbd3d-plot");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", plot.title || "plot");
  const all = plot.series.flatMap((s) => s.values);
  let lo = Math.min(...all), hi = Math.max(...all);
  if (!(hi > lo)) { lo -= 1; hi += 1; }
  const x0 = xs[0], x1 = xs[xs.length - 1] === x0 ? x0 + 1 : xs[xs.length - 1];
  const X = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - Rt);
  const Y = (y) => T + (1 - (y - lo) / (hi - lo)) * (H - T - Bt);
  const add = (tag, attrs, text) => {
    const e = doc.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.appendChild(e);
    return e;
  };
  add("rect", { x: L, y: T, width: W - L - Rt, height: H - T - Bt, fill: "none",
    stroke: "#bbb" });
  add("text", { x: L, y: 12, "font-size": 12 }, title);
  for (const v of [lo, hi]) {
    add("text", { x: L - 4, y: Y(v) + 4, "font-size": 10, "text-anchor": "end" },
      tickLabel(v));
  }
  plot.series.forEach((s, k) => {
    const color = PLOT_COLORS[k % PLOT_COLORS.length];
    add("polyline", { fill: "none", stroke: color, "stroke-width": 1.5,
      points: s.values.map((v, i) => `${X(xs[i]).toFixed(1)},${Y(v).toFixed(1)}`).join(" ") });
    add("text", { x: W - Rt - 4 - 44 * (n - 1 - k), y: legendY, "font-size": 11,
      fill: color, "text-anchor": "end" }, s.name);
  });
  const cursor = add("line", { y1: T, y2: H - Bt, stroke: "#333", "stroke-dasharray": "3 2" });
  return { svg, move: (i) => { const x = X(xs[i]); cursor.setAttribute("x1", x);
    cursor.setAttribute("x2", x); } };
}

function element(doc, tag, attrs = {}, text) {
  const e = doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function formatValue(v) {
  return typeof v === "number" ? Number(v.toPrecision(4)).toString() : String(v);
}

function showError(el, error) {
  console.error("rbd3d:", error);
  el.classList.remove("rbd3d-mounted");
  const view = el.querySelector(".rbd3d-view");
  if (view) view.remove();
  el.appendChild(element(el.ownerDocument, "p", { class: "rbd3d-error" },
    `3-D view: ${error.message || error}`));
}

function webglAvailable(doc) {
  try {
    const c = doc.createElement("canvas");
    return !!(c.getContext("webgl2") || c.getContext("webgl"));
  } catch (e) {
    return false;
  }
}

// ---- one view
export function mount(el, scene, options = {}) {
  const doc = el.ownerDocument;
  addStyle(doc);
  if (el.dataset.rbd3d) return el.rbd3d || null;   // mounted (or refused) once only
  el.dataset.rbd3d = "mounted";
  if (scene === undefined) {
    const data = el.querySelector('script[type="application/json"]');
    try {
      scene = JSON.parse(data ? data.textContent : "null");
    } catch (e) {
      showError(el, new SceneError(`the scene JSON does not parse: ${e.message}`));
      return null;
    }
  }
  let checked;
  try {
    checked = checkScene(scene);
  } catch (e) {
    showError(el, e);
    return null;
  }
  if (!(options.webgl ?? webglAvailable(doc))) {
    el.appendChild(element(doc, "p", { class: "rbd3d-nowebgl" },
      "This browser has no WebGL: the 3-D view is shown as a still image of its first frame."));
    return null;
  }
  try {
    return build(el, scene, checked);
  } catch (e) {
    showError(el, e);
    return null;
  }
}

function build(el, scene, { F, B, R, runs }) {
  const doc = el.ownerDocument;
  const win = doc.defaultView;
  const view = element(doc, "div", { class: "rbd3d-view" });
  const canvas = element(doc, "canvas", { class: "rbd3d-canvas", tabindex: "0", role: "img",
    "aria-label": `${scene.title || "3-D view"} (arrows orbit, + and - zoom, space plays, ` +
      "Home resets the view)" });
  view.appendChild(canvas);
  const controlsBar = element(doc, "div", { class: "rbd3d-controls" });
  const play = element(doc, "button", { type: "button", class: "rbd3d-play" }, "▶ Play");
  const speed = element(doc, "select", { class: "rbd3d-speed", "aria-label": "speed" });
  for (const s of SPEEDS) {
    const o = element(doc, "option", { value: String(s) }, `${s}×`);
    if (s === 1) o.selected = true;
    speed.appendChild(o);
  }
  const scrubLabel = element(doc, "label", {}, scene.scrub.label || "frame");
  const scrub = element(doc, "input", { type: "range", class: "rbd3d-scrub", min: "0",
    max: String(F - 1), step: "1", value: "0" });
  const scrubOut = element(doc, "output");
  scrubLabel.append(scrub, scrubOut);
  const reset = element(doc, "button", { type: "button", class: "rbd3d-reset" }, "Reset view");
  controlsBar.append(play, speed, scrubLabel);
  let param = null, paramOut = null;
  if (scene.param) {
    const label = element(doc, "label", {}, scene.param.label || "parameter");
    param = element(doc, "input", { type: "range", class: "rbd3d-param", min: "0",
      max: String(R - 1), step: "1", value: String(scene.param.index || 0) });
    paramOut = element(doc, "output");
    label.append(param, paramOut);
    controlsBar.appendChild(label);
  }
  controlsBar.appendChild(reset);
  view.appendChild(controlsBar);
  const readout = element(doc, "div", { class: "rbd3d-readout", "aria-live": "polite" });
  view.appendChild(readout);
  const plotsBox = element(doc, "div", { class: "rbd3d-plots" });
  view.appendChild(plotsBox);
  el.appendChild(view);

  const renderer = new WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(Math.min(win.devicePixelRatio || 1, 2));
  const world = new Scene();
  world.background = new Color("#f7f8fa");
  world.add(new AmbientLight(0xffffff, 0.55));
  const sun = new DirectionalLight(0xffffff, 1.6);
  sun.position.set(3, -4, 6);
  world.add(sun);
  const fill = new DirectionalLight(0xffffff, 0.5);
  fill.position.set(-4, 3, 2);
  world.add(fill);
  const camera = new PerspectiveCamera(40, 4 / 3, 0.01, 200);
  camera.up.set(0, 0, 1);     // the book's world is z-up

  const bodies = scene.bodies.map(() => new Group());
  bodies.forEach((g) => world.add(g));
  const state = { frame: 0, run: scene.param ? Number(param.value) : 0, playing: false,
    rendered: 0, dirty: true, time: 0, speed: 1, ready: false };
  const xs = scene.scrub.values;
  const increasing = xs.every((x, i) => i === 0 || x > xs[i - 1]);

  function place() {
    const { poses, scales } = runs[state.run];
    for (let b = 0; b < B; b++) {
      const at = 7 * (state.frame * B + b);
      const g = bodies[b];
      g.position.set(poses[at], poses[at + 1], poses[at + 2]);
      g.quaternion.set(poses[at + 4], poses[at + 5], poses[at + 6], poses[at + 3]);
      if (scene.bodies[b].scaled && scales) {
        const s = 3 * (state.frame * B + b);
        g.scale.set(scales[s], scales[s + 1], scales[s + 2]);
        fitArrows(g, scales[s + 2]);
      }
    }
    scrub.value = String(state.frame);
    scrubOut.textContent = formatValue(xs[state.frame]);
    if (param) {
      param.value = String(state.run);
      paramOut.textContent = formatValue(scene.param.values[state.run]);
    }
    const lines = runs[state.run].readout;
    readout.textContent = lines ? lines[state.frame] : "";
    for (const p of plots) p.move(state.frame);
    state.dirty = true;
  }

  let plots = [];
  let plotsRun = -1;
  function drawPlots() {
    if (plotsRun === state.run) return;
    plotsRun = state.run;
    plotsBox.replaceChildren();
    const width = plotsBox.clientWidth || canvas.clientWidth || 600;
    plots = runs[state.run].plots.map((p) => makePlot(doc, p, xs, width));
    for (const p of plots) plotsBox.appendChild(p.svg);
  }

  const grid = new GridHelper(1, 10, 0x9099a8, 0xd0d4dc);
  grid.rotateX(Math.PI / 2);   // into the xy plane (z up)
  world.add(grid);

  const controls = new OrbitControls(camera, canvas);
  controls.enableDamping = false;
  controls.addEventListener("change", () => { state.dirty = true; });

  function frameCamera() {
    // the scene's own camera, or one that sees every body over every frame
    const box = new Box3();
    const saved = [state.frame];
    for (let j = 0; j <= 8; j++) {
      const k = Math.round((j * (F - 1)) / 8);
      state.frame = k;
      place();
      world.updateMatrixWorld(true);
      for (const g of bodies) box.expandByObject(g);
    }
    state.frame = saved[0];
    place();
    if (box.isEmpty()) box.set(new Vector3(-1, -1, 0), new Vector3(1, 1, 1));
    const centre = box.getCenter(new Vector3());
    const size = box.getSize(new Vector3()).length() || 1;
    const g = Math.max(1, Math.ceil(size * 1.5));
    grid.scale.setScalar(g);
    grid.position.set(Math.round(centre.x), Math.round(centre.y), Math.min(0, box.min.z));
    if (scene.camera) {
      camera.position.fromArray(scene.camera.position);
      controls.target.fromArray(scene.camera.target);
    } else {
      controls.target.copy(centre);
      camera.position.copy(centre).add(new Vector3(1.1, -1.5, 0.8).normalize()
        .multiplyScalar(1.3 * size + 0.2));
    }
    camera.near = size / 100;
    camera.far = size * 50 + 10;
    camera.updateProjectionMatrix();
    controls.update();
    controls.saveState();
  }

  function resize() {
    const width = canvas.clientWidth || el.clientWidth || 600;
    const height = Math.round(Math.max(200, Math.min(0.6 * win.innerHeight, 0.75 * width)));
    canvas.style.height = `${height}px`;
    renderer.setSize(width, height, false);
    camera.aspect = width / height;
    camera.updateProjectionMatrix();
    plotsRun = -1;        // the plots again, at the new width
    drawPlots();
    for (const p of plots) p.move(state.frame);
    state.dirty = true;
  }

  function setFrame(k) {
    state.frame = Math.max(0, Math.min(F - 1, Math.round(Number(k)) || 0));
    state.time = xs[state.frame];
    place();
  }
  function setRun(r) {
    state.run = Math.max(0, Math.min(R - 1, Math.round(Number(r)) || 0));
    drawPlots();
    place();
  }
  function setPlaying(on) {
    state.playing = on;
    play.textContent = on ? "⏸ Pause" : "▶ Play";
    play.setAttribute("aria-pressed", String(on));
    if (on && state.frame === F - 1) setFrame(0);
    last = null;
  }

  scrub.addEventListener("input", () => { setPlaying(false); setFrame(scrub.value); });
  if (param) param.addEventListener("input", () => setRun(param.value));
  play.addEventListener("click", () => setPlaying(!state.playing));
  speed.addEventListener("change", () => { state.speed = Number(speed.value); });
  reset.addEventListener("click", () => { controls.reset(); state.dirty = true; });
  canvas.addEventListener("keydown", (event) => {
    const step = Math.PI / 36;
    const keys = {
      ArrowLeft: () => controls.rotateLeft(step), ArrowRight: () => controls.rotateLeft(-step),
      ArrowUp: () => controls.rotateUp(step), ArrowDown: () => controls.rotateUp(-step),
      "+": () => controls.dollyIn(1.1), "=": () => controls.dollyIn(1.1),
      "-": () => controls.dollyOut(1.1), " ": () => setPlaying(!state.playing),
      Home: () => controls.reset(),
    };
    if (keys[event.key]) {
      keys[event.key]();
      state.dirty = true;
      event.preventDefault();
    }
  });

  // playing: through the scrub values as seconds when they increase (a trajectory's times),
  // else ten frames a second (a grid of postures)
  let last = null;
  function advance(now) {
    if (last === null) { last = now; return; }
    const dt = ((now - last) / 1000) * state.speed;
    last = now;
    let k = state.frame;
    if (increasing && xs[F - 1] > xs[0]) {
      state.time += dt;
      while (k < F - 1 && xs[k + 1] <= state.time) k++;
    } else {
      state.time += dt * 10;
      k = Math.min(F - 1, Math.floor(state.time));
    }
    if (k !== state.frame) {
      state.frame = k;
      place();
    }
    if (k === F - 1) setPlaying(false);
  }

  function loop(now) {
    // a view out of the document (a notebook keeps outputs of cells scrolled away
    // detached, and may attach an output after its script ran) waits, drawing nothing
    if (!el.isConnected) {
      win.setTimeout(() => win.requestAnimationFrame(loop), 500);
      return;
    }
    win.requestAnimationFrame(loop);
    if (!state.ready) return;
    if (state.playing) advance(now);
    if (canvas.clientWidth && Math.abs(canvas.clientWidth - renderer.domElement.width /
        renderer.getPixelRatio()) > 1) resize();
    if (state.dirty) {
      state.dirty = false;
      renderer.render(world, camera);
      state.rendered++;
    }
  }

  const hook = {
    get frame() { return state.frame; },
    get run() { return state.run; },
    get playing() { return state.playing; },
    get rendered() { return state.rendered; },
    get ready() { return state.ready; },
    setFrame, setRun,
    // each body's pose as displayed: from its world matrix, not from the JSON
    poses() {
      world.updateMatrixWorld(true);
      const p = new Vector3(), q = new Quaternion(), s = new Vector3();
      return bodies.map((g) => {
        new Matrix4().copy(g.matrixWorld).decompose(p, q, s);
        const sign = q.w < 0 ? -1 : 1;
        return [p.x, p.y, p.z, sign * q.w, sign * q.x, sign * q.y, sign * q.z];
      });
    },
    camera: () => [...camera.position.toArray(), ...controls.target.toArray()],
  };
  el.rbd3d = hook;
  el.classList.add("rbd3d-mounted");

  const packNames = [...new Set(scene.bodies.flatMap((b) => (b.shapes || [])
    .filter((s) => s.type === "mesh").map((s) => s.pack)))];
  Promise.all(packNames.map((n) => loadPack(n, scene))).then((loaded) => {
    const packs = Object.fromEntries(packNames.map((n, k) => [n, loaded[k]]));
    scene.bodies.forEach((body, b) => {
      (body.shapes || []).forEach((shape, k) => {
        bodies[b].add(shapeObject(shape, packs, `bodies[${b}] (${body.name}) shape ${k}`));
      });
    });
    setRun(state.run);
    resize();
    frameCamera();
    state.ready = true;
    state.dirty = true;
  }).catch((e) => showError(el, e));
  win.requestAnimationFrame(loop);
  return hook;
}

// every div.rbd3d of the page (or of root) not mounted yet
export function mountAll(root = document) {
  return [...root.querySelectorAll("div.rbd3d")].map((el) => mount(el));
}

// loaded by a page (the book's script tag, or the inline module of a live notebook output):
// mount what is there (a module runs after the page is parsed)
if (typeof document !== "undefined") mountAll();
