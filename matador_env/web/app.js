// Matador in the browser. Talks only to its own server: GET /games/options,
// POST /games, POST /games/{id}/move, POST /games/{id}/bot, POST /games/{id}/next.
// The server keeps the game; this page draws what it is sent and sends clicks.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const params = new URLSearchParams(location.search);
// The address options (docs/browser.md); readAddress checks them, and one the page
// cannot use falls back to its default, named in the notice under the form.
const ADDRESS_OPTIONS = ["pause", "seed", "preset", "players", "level"];
const DIGITS = /^[0-9]+$/;
const MAX_PAUSE = 60000;
// Milliseconds between bot moves (?pause=200 plays faster).
let PAUSE = 800;
// The seed of every game dealt from this page (?seed=7), or null: a new one each time.
let SEED = null;

const $ = (id) => document.getElementById(id);
let options = null;
let game = null;
let selected = null; // the hand tile picked, waiting for an end
let busy = false;

// -- talking to the server -------------------------------------------------------------

// A change of the game sends the version the page last saw as If-Match: the server
// refuses it (412 stale) if anything else changed the game since.
async function call(method, path, body, version) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (version !== undefined) init.headers["If-Match"] = `"${version}"`;
  let response;
  try {
    response = await fetch(path, init);
  } catch (cause) {
    throw failure("network", `the server could not be reached (${cause.message})`);
  }
  // A proxy in front of the server, or a server going down, can answer in HTML.
  const data = await response.json().catch(() => null);
  if (data === null || typeof data !== "object") {
    const status = `${response.status} ${response.statusText}`.trim();
    throw failure("http", `the server answered ${status}, not in JSON`);
  }
  if (!response.ok) {
    const where = data.field ? ` (${data.field})` : "";
    throw failure(data.error || "http", `${data.message || data.error || response.status}${where}`);
  }
  return data;
}

function failure(kind, message) {
  const error = new Error(message);
  error.kind = kind;
  return error;
}

// The page's own busy flag, mirrored on <body> at once so that a test (or a
// style) never sees a stale "idle" between a click and the server's answer.
function setBusy(value) {
  busy = value;
  document.body.dataset.busy = value ? "1" : "0";
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// -- moves in their text form ------------------------------------------------------------

function parseMove(text) {
  if (text === "draw" || text === "pass") return { text, kind: text };
  const m = /^(\d+)-(\d+)(?:@(\d+)(?:>(\d+)|(x)|(\^)))?$/.exec(text);
  if (!m) return { text, kind: "?" };
  const tile = `${m[1]}-${m[2]}`;
  if (m[3] === undefined) return { text, kind: "play", tile, mode: "lead", end: null };
  const end = Number(m[3]);
  if (m[4] !== undefined) return { text, kind: "play", tile, mode: "inline", end, shows: Number(m[4]) };
  return { text, kind: "play", tile, mode: m[5] ? "cross" : "upright", end };
}

function legalMoves() {
  if (!game || game.status !== "your_turn") return [];
  return game.view.legal_moves.map(parseMove);
}

function describeChoice(move) {
  if (move.mode === "inline") return `${move.shows} outward`;
  if (move.mode === "cross") return "crosswise";
  if (move.mode === "upright") return "upright";
  return "lead";
}

// -- drawing dominoes ----------------------------------------------------------------------

// Pips on a 3 x 3 grid (row by row); 10 and above are written as numbers.
const PIPS = {
  0: [], 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8],
  6: [0, 2, 3, 5, 6, 8], 7: [0, 2, 3, 4, 5, 6, 8], 8: [0, 1, 2, 3, 5, 6, 7, 8],
  9: [0, 1, 2, 3, 4, 5, 6, 7, 8],
};

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function drawHalf(group, x, y, value) {
  if (value === null || value === undefined) return;
  if (value in PIPS) {
    for (const p of PIPS[value]) {
      const px = x + ((p % 3) - 1) * 0.26;
      const py = y + (Math.floor(p / 3) - 1) * 0.26;
      el("circle", { cx: px, cy: py, r: 0.085, class: "pip" }, group);
    }
  } else {
    const t = el("text", { x, y: y + 0.02, class: "num" }, group);
    t.textContent = String(value);
  }
}

// A domino from the centres of its two unit halves, each [x, y, value].
function drawDomino(parent, h1, h2, classes, title) {
  const g = el("g", { class: `domino ${classes}` }, parent);
  const x0 = Math.min(h1[0], h2[0]) - 0.5;
  const y0 = Math.min(h1[1], h2[1]) - 0.5;
  const w = Math.abs(h1[0] - h2[0]) + 1;
  const h = Math.abs(h1[1] - h2[1]) + 1;
  el("rect", { x: x0 + 0.03, y: y0 + 0.03, width: w - 0.06, height: h - 0.06, rx: 0.12, class: "face" }, g);
  const mx = (h1[0] + h2[0]) / 2;
  const my = (h1[1] + h2[1]) / 2;
  if (w > h) el("line", { x1: mx, y1: y0 + 0.14, x2: mx, y2: y0 + h - 0.14, class: "bar" }, g);
  else el("line", { x1: x0 + 0.14, y1: my, x2: x0 + w - 0.14, y2: my, class: "bar" }, g);
  drawHalf(g, h1[0], h1[1], h1[2]);
  drawHalf(g, h2[0], h2[1], h2[2]);
  if (title) el("title", {}, g).textContent = title;
  return g;
}

// -- the layout ------------------------------------------------------------------------------

const HEADINGS = { west: [-1, 0], east: [1, 0], north: [0, -1], south: [0, 1] };
const left = ([dx, dy]) => [dy, -dx]; // screen y grows downwards
const right = ([dx, dy]) => [-dy, dx];
const add = (p, d, k) => [p[0] + d[0] * k, p[1] + d[1] * k];

const neg = ([dx, dy]) => [-dx, -dy];
const dot = (p, d) => p[0] * d[0] + p[1] * d[1];
const same = (d, e) => d[0] === e[0] && d[1] === e[1];

// A long arm coils up instead of stretching the table: it runs out to "far"
// (along its first heading), steps one tile to its left, runs back in to "near",
// steps left again, and so on. Every arm of the lead coils to its own left, a
// pinwheel, so each fills a quarter of the table of its own and none runs into
// another.
const REACH = { horizontal: { far: 13, near: 2 }, vertical: { far: 5, near: 2 } };
// An open end's marker sits END_GAP beyond the last tile where the table allows,
// else END_NEAR, inside the unit square just beyond the end, which the end claims
// while it is open (the next tile there lies in it).
const END_GAP = 0.62;
const END_NEAR = 0.5;
// A crosswise piece may slide this far along itself off the middle of its end (it
// still touches the tile it hangs on) when the middle is taken.
const SLIDES = [0.5, -0.5, 1, -1];
// How far ahead (in half units) a detour looks for open table, to take the roomier way.
const LOOKAHEAD = 12;
// The search for a layout in which every piece touches its parent gives up after
// this many tries of a way.
const SEARCH_TRIES = 2000;

// Tiles and open ends claim the cells of the half-unit grid that every tile's edges
// lie on: cell "i,j" covers x from i/2 to (i+1)/2 and y from j/2 to (j+1)/2.
function cells(p, q) {
  const [x0, x1] = [Math.round(2 * p[0]), Math.round(2 * q[0])].sort((a, b) => a - b);
  const [y0, y1] = [Math.round(2 * p[1]), Math.round(2 * q[1])].sort((a, b) => a - b);
  const found = [];
  for (let x = x0; x < x1; x++) for (let y = y0; y < y1; y++) found.push(`${x},${y}`);
  return found;
}

// The strip one unit wide centred on at's line along heading, from start to stop ahead.
const strip = (at, heading, start, stop) =>
  cells(add(add(at, heading, start), left(heading), 0.5), add(add(at, heading, stop), right(heading), 0.5));

// Where the next tile on a port goes, which way, and how its arm coils (arm null: it
// runs straight; step: the heading after a step aside).
const socketAt = (at, heading, arm, step) => ({ at, heading, arm, step });
// The unit square just beyond an end, which the end claims while open.
const ahead = (socket) => strip(socket.at, socket.heading, 0, 1);

// One way to lay a piece: the centres of its halves and the sockets of its ports.
function tileCells({ halves: [[x1, y1], [x2, y2]] }) {
  return cells([Math.min(x1, x2) - 0.5, Math.min(y1, y2) - 0.5], [Math.max(x1, x2) + 0.5, Math.max(y1, y2) + 0.5]);
}

function inLine(at, heading, arm, step) {
  const halves = [add(at, heading, 0.5), add(at, heading, 1.5)];
  return { halves, sockets: { straight: socketAt(add(at, heading, 2), heading, arm, step) } };
}

// Across heading, half a on the left; its sides are ports too (branches, a spinner's arms).
function across(centre, heading, arm, step) {
  const [l, r] = [left(heading), right(heading)];
  const halves = [add(centre, l, 0.5), add(centre, r, 0.5)];
  const sockets = {
    straight: socketAt(add(centre, heading, 0.5), heading, arm, step),
    left: socketAt(add(centre, l, 1), l, null, null),
    right: socketAt(add(centre, r, 1), r, null, null),
  };
  return { halves, sockets };
}

// Beyond the end, the way the arm runs (a crosswise piece slid to the left of the middle).
function straight(inline, socket, arm, step, slide) {
  const { at, heading } = socket;
  if (inline) return inLine(at, heading, arm, step);
  return across(add(add(at, heading, 0.5), left(heading), slide), heading, arm, step);
}

// Beside the end, heading turn from then on, reaching no further ahead than one unit:
// an in-line tile with half a just beyond the end; a crosswise one along the old
// heading, half beside the last tile and half beyond its end.
function turned(inline, socket, turn, arm, step) {
  const { at, heading } = socket;
  if (inline) return inLine(add(add(at, heading, 0.5), turn, -0.5), turn, arm, step);
  return across(add(at, turn, 1), turn, arm, step);
}

// The ways its arm means (the plan first), and the detours, which run straight on.
function ways(inline, socket) {
  const { heading, arm, step } = socket;
  const detours = [turned(inline, socket, left(heading), null, null), turned(inline, socket, right(heading), null, null)];
  if (!inline) for (const slide of SLIDES) detours.push(straight(inline, socket, null, null, slide));
  if (!arm) return [[straight(inline, socket, null, null, 0)], detours];
  detours.unshift(straight(inline, socket, null, null, 0));
  if (step) {
    // Just stepped aside: an in-line tile turns back along the arm; a crosswise one
    // (one unit deep) steps on aside, and the tile after it turns.
    const stepping = straight(inline, socket, arm, step, 0);
    return inline ? [[turned(inline, socket, step, arm, null), stepping], detours] : [[stepping], detours];
  }
  // An in-line tile turns where it would pass the arm's reach. A crosswise piece lies
  // across the end even there, and the tile after it turns; but not back in among a
  // spinner's four arms, where that tile would run into the next arm: it turns itself.
  const u = dot(socket.at, arm.out);
  let reached;
  if (same(heading, arm.out)) reached = inline && u + 2 > arm.far;
  else reached = same(heading, neg(arm.out)) && (inline ? u - 2 < arm.near : arm.hemmed && u - 1 < arm.near);
  const turn = turned(inline, socket, arm.side, arm, neg(heading));
  return reached ? [[turn], detours] : [[straight(inline, socket, arm, null, 0), turn], detours];
}

// The cells taken by the tiles laid so far, and by the ends open now ("piece/port").
class Board {
  constructor(ports) {
    this.ports = ports; // each piece's ports in use
    this.tiles = new Map(); // cell -> the piece on it
    this.claims = new Map(); // cell -> the open end claiming it
    this.sockets = new Map(); // an end claims its socket's ahead()
  }

  lay(i, end, laid) {
    if (end !== null) {
      for (const c of ahead(this.sockets.get(end))) this.claims.delete(c);
    }
    for (const c of tileCells(laid)) this.tiles.set(c, i);
    for (const port of this.ports.get(i) || []) {
      const socket = laid.sockets[port];
      this.sockets.set(`${i}/${port}`, socket);
      for (const c of ahead(socket)) this.claims.set(c, `${i}/${port}`);
    }
  }

  // The piece whose tile or open end (other than end) takes cell c, or null.
  taker(c, end) {
    if (this.tiles.has(c)) return this.tiles.get(c);
    const claim = this.claims.get(c);
    return claim === undefined || claim === end ? null : parseInt(claim, 10);
  }

  // The pieces whose tiles or open ends take a cell of the tile or of its own ends' squares.
  blockers(i, end, laid) {
    const all = tileCells(laid);
    for (const port of this.ports.get(i) || []) all.push(...ahead(laid.sockets[port]));
    const found = new Set();
    for (const c of all) {
      const k = this.taker(c, end);
      if (k !== null) found.add(k);
    }
    return found;
  }

  // How far (in half units, up to LOOKAHEAD) the table lies open beyond the nearest end.
  room(i, end, laid) {
    const own = new Set(tileCells(laid));
    let reach = LOOKAHEAD;
    for (const port of this.ports.get(i) || []) {
      const socket = laid.sockets[port];
      for (let d = 0; d < reach; d++) {
        const cellsAhead = strip(socket.at, socket.heading, d / 2, (d + 1) / 2);
        if (cellsAhead.some((c) => own.has(c) || this.taker(c, end) !== null)) {
          reach = d;
          break;
        }
      }
    }
    return reach;
  }
}

// The ways to lay one piece as the search tries them: the meant ones in order, then
// the detours, the roomiest first; and the pieces found in their way.
class Choice {
  constructor(ways, detours, blamed) {
    Object.assign(this, { ways, detours, blamed, tried: 0 });
  }

  nextWay(board, i, end) {
    if (this.tried === this.ways.length && this.detours.length) {
      const rooms = this.detours.map((way) => [board.room(i, end, way), way]);
      this.ways.push(...rooms.sort((a, b) => b[0] - a[0]).map(([, way]) => way)); // a stable sort
      this.detours = [];
    }
    if (this.tried === this.ways.length) return null;
    this.tried += 1;
    return this.ways[this.tried - 1];
  }
}

// How each piece lies, in the order they were played: the first way that covers no
// tile and no square claimed by an end open at the time, and leaves its own ends
// their squares; where none is free, the search goes back to the latest piece in the
// way of them all (or the parent) and lays it its next way (backjumping); should the
// search fail, a piece left no free way lies straight out from its end.
function layOut(pieces, ports, coil) {
  const ends = pieces.map((p) => (p.parent === null ? null : `${p.parent}/${p.port}`));
  let board = new Board(ports);
  const laid = [];
  let deepest = []; // the most pieces laid so far
  const choices = [];
  let tries = 0;
  let searching = true;
  while (laid.length < pieces.length) {
    const i = laid.length;
    const piece = pieces[i];
    const end = ends[i];
    const inline = piece.lie === "inline";
    if (i === choices.length) {
      if (end === null) choices.push(new Choice([leadWay(piece, coil)], [], new Set()));
      else choices.push(new Choice(...ways(inline, board.sockets.get(end)), new Set([piece.parent])));
    }
    const choice = choices[i];
    let way = null;
    let candidate;
    while (way === null && (candidate = choice.nextWay(board, i, end)) !== null) {
      tries += 1;
      const blockers = board.blockers(i, end, candidate);
      for (const k of blockers) choice.blamed.add(k);
      if (blockers.size === 0) way = candidate;
    }
    if (way === null && searching) {
      if (choice.blamed.size && tries <= SEARCH_TRIES) {
        const back = Math.max(...choice.blamed);
        for (const k of choice.blamed) if (k !== back) choices[back].blamed.add(k);
        choices.length = back + 1;
        laid.length = back;
      } else {
        // The search has failed (rare): back to the most pieces it laid, and on from
        // there without it, a piece with no free way pushed out from its end.
        searching = false;
        laid.splice(0, laid.length, ...deepest);
        choices.splice(0, choices.length, ...laid.map((way) => new Choice([way], [], new Set()))); // (done with)
      }
      board = new Board(ports);
      laid.forEach((earlier, k) => board.lay(k, ends[k], earlier));
      continue;
    }
    if (way === null) way = pushedOut(i, end, inline, board); // (the lead always fits)
    board.lay(i, end, way);
    laid.push(way);
    if (laid.length > deepest.length) deepest = laid.slice();
  }
  return { laid, board };
}

// Straight out from the end, as near as it fits, the gap showing where it hangs: for
// the rare end left no free way touching it (three branching matadors round a spinner
// can leave none).
function pushedOut(i, end, inline, board) {
  const socket = board.sockets.get(end);
  for (let distance = 0.5; ; distance += 0.5) {
    const at = add(socket.at, socket.heading, distance);
    const way = straight(inline, socketAt(at, socket.heading, null, null), null, null, 0);
    if (board.blockers(i, end, way).size === 0) return way;
  }
}

// The lead, across the middle; a spinner lead stands across the line, its four sides
// taking the four arms (each "hemmed" by two others).
function leadWay(piece, coil) {
  const spinner = piece.lie === "spinner";
  const halves = spinner ? [[0, -0.5], [0, 0.5]] : [[-0.5, 0], [0.5, 0]];
  const reach = spinner ? { west: 0.5, east: 0.5, north: 1, south: 1 } : { west: 1, east: 1 };
  const sockets = {};
  for (const [port, distance] of Object.entries(reach)) {
    const heading = HEADINGS[port];
    const { far, near } = heading[0] !== 0 ? REACH.horizontal : REACH.vertical;
    const arm = coil ? { out: heading, side: left(heading), far, near, hemmed: spinner } : null;
    sockets[port] = socketAt(add([0, 0], heading, distance), heading, arm, null);
  }
  return { halves, sockets };
}

// Each open end's marker: END_GAP out where its disc then covers no tile and keeps a
// diameter from every other marker, else END_NEAR out.
function endSpots(ends, board) {
  const sockets = ends.map((e) => board.sockets.get(`${e.piece}/${e.port}`));
  const centres = sockets.map((s) => add(s.at, s.heading, END_NEAR));
  sockets.forEach((socket, k) => {
    const far = add(socket.at, socket.heading, END_GAP);
    const covers = strip(socket.at, socket.heading, 1, 1.5).some((c) => board.tiles.has(c));
    const apart = centres.every((c, m) => m === k || (far[0] - c[0]) * (far[0] - c[0]) + (far[1] - c[1]) * (far[1] - c[1]) >= 1 - 1e-9);
    if (!covers && apart) centres[k] = far;
  });
  return ends.map((end, k) => ({ end, centre: centres[k] }));
}

// matador_env/layout.py's layout_geometry is this geometry in Python (it places the
// tiles of the environments' rgb_array pictures, and its docs tell the rules);
// tests/test_browser.py holds the two equal.
function layoutGeometry(table) {
  // Branches leave the arms sideways, where a coiled arm would run into them.
  const sideways = (p) => p.port === "left" || p.port === "right";
  const coil = !table.pieces.some(sideways) && !table.ends.some(sideways);
  // The ports in use: each has a piece on it or is an open end.
  const ports = new Map();
  const use = (piece, port) => ports.set(piece, [...(ports.get(piece) || []), port]);
  for (const p of table.pieces) if (p.parent !== null) use(p.parent, p.port);
  for (const e of table.ends) use(e.piece, e.port);
  const { laid, board } = layOut(table.pieces, ports, coil);
  const placed = table.pieces.map((piece, i) => {
    const [[x1, y1], [x2, y2]] = laid[i].halves;
    return { piece, h1: [x1, y1, piece.a], h2: [x2, y2, piece.b] };
  });
  return { placed, ends: endSpots(table.ends, board) };
}

function drawBoard() {
  const svg = $("board");
  svg.replaceChildren();
  if (!game) return;
  const { placed, ends } = layoutGeometry(game.table);
  const xs = [0];
  const ys = [0];
  for (const { h1, h2 } of placed) xs.push(h1[0], h2[0]), ys.push(h1[1], h2[1]);
  for (const { centre } of ends) xs.push(centre[0]), ys.push(centre[1]);
  // At least a 26 x 11 window, so that the first tiles are not drawn huge.
  let [x0, x1, y0, y1] = [Math.min(...xs) - 1.2, Math.max(...xs) + 1.2, Math.min(...ys) - 1.2, Math.max(...ys) + 1.2];
  const grow = (lo, hi, need) => (hi - lo >= need ? [lo, hi] : [(lo + hi - need) / 2, (lo + hi + need) / 2]);
  [x0, x1] = grow(x0, x1, 26);
  [y0, y1] = grow(y0, y1, 11);
  svg.setAttribute("viewBox", `${x0} ${y0} ${x1 - x0} ${y1 - y0}`);
  if (!placed.length) {
    const t = el("text", { x: 0, y: 0, class: "empty" }, svg);
    t.textContent = game.status === "your_turn" ? "Lead a tile from your hand" : "No tile on the table yet";
  }
  for (const [i, { piece, h1, h2 }] of placed.entries()) {
    const classes = [piece.lie, piece.matador ? "matador" : "", i === game.table.last ? "last" : ""];
    const how = { lead: "the lead", spinner: "a spinner", inline: "in line", cross: "crosswise", upright: "upright" }[piece.lie];
    const g = drawDomino(svg, h1, h2, classes.join(" "), `${piece.tile}, ${how}${piece.matador ? ", a matador" : ""}`);
    g.dataset.tile = piece.tile;
  }
  const targets = new Set(
    selected ? legalMoves().filter((m) => m.tile === selected && m.end !== null).map((m) => m.end) : [],
  );
  for (const { end, centre } of ends) {
    const g = el("g", { class: `end ${end.kind}${targets.has(end.index) ? " target" : ""}` }, svg);
    g.dataset.end = String(end.index);
    g.dataset.text = end.text;
    el("circle", { cx: centre[0], cy: centre[1], r: 0.5, class: "spot" }, g);
    const label = el("text", { x: centre[0], y: centre[1] + 0.02, class: "label" }, g);
    label.textContent = end.text;
    el("title", {}, g).textContent = `end ${end.index}: ${end.text}`;
    g.addEventListener("click", () => endClicked(end.index));
    if (targets.has(end.index)) {
      // Reachable from the keyboard too: Tab to an end, Enter or Space to play there.
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          endClicked(end.index);
        }
      });
    }
  }
}

// -- the rest of the table -----------------------------------------------------------------

function drawHand() {
  const hand = $("hand");
  hand.replaceChildren();
  // A bot to move while the page waits for nothing: a failure stopped the bots.
  $("retry").hidden = !game || busy || game.status !== "bot_turn";
  if (!game) {
    $("draw").disabled = $("pass").disabled = true;
    $("next").hidden = true;
    return;
  }
  const moves = legalMoves();
  for (const tile of game.view.hand) {
    const [a, b] = tile.split("-").map(Number);
    const playable = moves.some((m) => m.tile === tile);
    const button = document.createElement("button");
    button.type = "button";
    button.className = `tile${playable ? " playable" : ""}${selected === tile ? " selected" : ""}`;
    button.dataset.tile = tile;
    button.title = playable ? `${tile}: click to play` : tile;
    const svg = el("svg", { viewBox: "-0.55 -1.05 1.1 2.1", "aria-hidden": "true" }, button);
    const matador = a + b === game.link_sum || a + b === 0;
    drawDomino(svg, [0, -0.5, a], [0, 0.5, b], matador ? "matador" : "");
    button.addEventListener("click", () => tileClicked(tile));
    hand.appendChild(button);
  }
  const kinds = new Set(moves.map((m) => m.kind));
  $("draw").disabled = busy || !kinds.has("draw");
  $("pass").disabled = busy || !kinds.has("pass");
  $("draw").classList.toggle("hot", !busy && kinds.has("draw") && !kinds.has("play"));
  $("pass").classList.toggle("hot", !busy && kinds.has("pass"));
  const canNext = game.status === "hand_over";
  $("next").hidden = !canNext;
  $("next").textContent = game.outcome && ["redeal_tie", "no_lead"].includes(game.outcome.termination) ? "Deal again" : "Next hand";
}

function drawSeats() {
  const seats = $("seats");
  seats.replaceChildren();
  if (!game) return;
  for (const seat of game.seats) {
    const div = document.createElement("div");
    div.className = `seat${seat.to_move ? " to-move" : ""}${seat.seat === game.settings.seat ? " me" : ""}`;
    div.dataset.seat = String(seat.seat);
    div.dataset.tiles = String(seat.tiles);
    const backs = '<span class="back"></span>'.repeat(Math.min(seat.tiles, 12));
    const count = game.outcome ? ` · count ${game.outcome.counts[seat.seat]}` : "";
    div.innerHTML = `<b>${seat.name}</b> <span class="n">${seat.tiles} tile${seat.tiles === 1 ? "" : "s"}${count}</span><span class="backs">${backs}</span>`;
    seats.appendChild(div);
  }
  const yard = document.createElement("div");
  yard.className = "seat yard";
  yard.dataset.boneyard = String(game.view.boneyard_size);
  yard.innerHTML = `<b>Boneyard</b> <span class="n">${game.view.boneyard_size} (${game.drawable} to draw)</span>`;
  seats.appendChild(yard);
}

function drawScore() {
  const score = $("score");
  score.replaceChildren();
  if (!game) return;
  const table = document.createElement("table");
  table.id = "totals";
  for (const [side, name] of game.sides.entries()) {
    const row = table.insertRow();
    row.dataset.side = String(side);
    row.insertCell().textContent = name;
    const cell = row.insertCell();
    cell.className = "total";
    cell.textContent = String(game.totals[side]);
  }
  score.appendChild(table);
  const note = document.createElement("p");
  note.className = "note";
  const s = game.settings;
  note.textContent = `${s.preset}, ${s.players} players${s.teams ? " in teams" : ""}, bots: ${s.level}; ` +
    (s.match ? `match to ${game.target}, hand ${game.hand_no}` : `one hand`) + `; seed ${s.seed}`;
  score.appendChild(note);
}

function drawLog() {
  const log = $("log");
  log.replaceChildren();
  if (!game) return;
  for (const line of game.log) {
    const li = document.createElement("li");
    li.textContent = line;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
}

function statusText() {
  if (!game) return "";
  if (game.status === "finished") {
    return [game.outcome ? game.outcome.text : "", game.result || ""].join(" ").trim() || "The game is over.";
  }
  if (game.status === "hand_over") return game.outcome.text;
  if (game.status === "bot_turn") {
    const seat = game.seats.find((s) => s.to_move);
    return `${seat ? seat.name : "A bot"} is to play…`;
  }
  if (selected) return `Place ${selected}: click a highlighted end.`;
  const kinds = new Set(legalMoves().map((m) => m.kind));
  if (!game.table.pieces.length) return "Your lead: click a raised tile.";
  if (!kinds.has("play")) return kinds.has("draw") ? "Nothing fits: draw." : "Nothing fits and you may not draw: pass.";
  return "Your turn: click a raised tile.";
}

function render() {
  document.body.dataset.game = game ? game.id : "";
  document.body.dataset.status = game ? game.status : "";
  document.body.dataset.busy = busy ? "1" : "0";
  drawSeats();
  drawBoard();
  drawHand();
  drawScore();
  drawLog();
  $("status").textContent = statusText();
  $("status").className = game ? game.status : "";
}

function say(text) {
  $("event").textContent = text;
  $("event").classList.remove("error");
}

// Show a failure. A game gone from the server (expired after 30 minutes unused, or
// ended by a restart) is dropped from the page, which nothing can go on with.
function fail(error) {
  let message = error.message;
  if (error.kind === "unknown_game" && game) {
    game = null;
    selected = null;
    $("chooser").hidden = true;
    message = "This game is no longer on the server (a game unused for 30 minutes is dropped, and a restart of the server ends them all): deal a new one.";
  }
  say(`⚠ ${message}`);
  $("event").classList.add("error");
}

// -- playing ---------------------------------------------------------------------------------

// One action of the person, then the bots' moves, the page busy meanwhile; the
// step makes the call and returns what to say, and a refusal is shown instead.
async function act(step) {
  setBusy(true);
  try {
    say(await step());
    render();
    await botsPlay();
  } catch (error) {
    fail(error);
    if (!game) return;
    // Changed elsewhere (another tab, a script), or an answer lost on the way: go on
    // from the game as it is now. Should that fail too, Retry does it later.
    try {
      game = await call("GET", `/games/${game.id}`);
      render();
      await botsPlay();
    } catch (again) {
      fail(again);
    }
  } finally {
    setBusy(false);
    render();
  }
}

async function send(move) {
  if (busy) return;
  await act(async () => {
    selected = null;
    $("chooser").hidden = true;
    const reply = await call("POST", `/games/${game.id}/move`, { move: move.text }, game.version);
    game = reply.game;
    return reply.event.text + ".";
  });
}

// The bots move one at a time with a pause, then the person's forced draws and
// passes are made for them the same way.
async function botsPlay() {
  for (;;) {
    const moves = legalMoves(); // none unless it is the person's turn
    const forced = moves.length === 1 && moves[0].kind !== "play";
    if (game.status !== "bot_turn" && !forced) return;
    await sleep(PAUSE);
    const noLead = !game.table.pieces.length; // before the move that is made now
    const reply = forced
      ? await call("POST", `/games/${game.id}/move`, { move: moves[0].text }, game.version)
      : await call("POST", `/games/${game.id}/bot`, undefined, game.version);
    game = reply.game;
    say(forced ? forcedText(moves[0], reply.event.text, noLead) : reply.event.text + ".");
    render();
  }
}

// Why the person's draw or pass was made for them, in the terminal's words. Only a
// lead that must be a double other than 0-0 (Leiden's) can leave a leader nothing to
// lead, which a hand holding 0-0 or a matador does not show at a glance.
function forcedText(move, text, noLead) {
  if (move.kind === "pass") {
    return noLead
      ? "You pass: no double to lead (0-0 may not) and nothing you may draw."
      : "You pass: nothing to play and nothing you may draw.";
  }
  return noLead
    ? `${text} (nothing to lead: the lead must be a double other than 0-0).`
    : `${text} (nothing to play).`;
}

function tileClicked(tile) {
  if (busy || !game || game.status !== "your_turn") return;
  const moves = legalMoves().filter((m) => m.tile === tile);
  $("chooser").hidden = true;
  if (!moves.length) {
    selected = null;
    say(`${tile} cannot be placed now.`);
    render();
    return;
  }
  if (moves.length === 1) {
    send(moves[0]);
    return;
  }
  selected = selected === tile ? null : tile;
  render();
}

function endClicked(index) {
  if (busy || !selected) return;
  const moves = legalMoves().filter((m) => m.tile === selected && m.end === index);
  if (!moves.length) {
    say(`${selected} does not fit on end ${index}.`);
    return;
  }
  if (moves.length === 1) {
    send(moves[0]);
    return;
  }
  // Several ways on one end (a matador's outward half, crosswise or in line): ask.
  const chooser = $("chooser");
  chooser.replaceChildren();
  const label = document.createElement("span");
  label.textContent = `${selected} on end ${index}:`;
  chooser.appendChild(label);
  for (const move of moves) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.move = move.text;
    button.textContent = describeChoice(move);
    button.addEventListener("click", () => send(move));
    chooser.appendChild(button);
  }
  chooser.hidden = false;
}

async function deal(event) {
  if (event) event.preventDefault();
  if (busy) return;
  await act(async () => {
    selected = null;
    if (!options) throw new Error("the game options did not load: reload the page");
    const settings = {
      preset: $("preset").value,
      players: Number($("players").value),
      teams: $("teams").checked,
      match: $("match").checked,
    };
    // No level offered for this table: the server says why.
    if ($("level").value) settings.level = $("level").value;
    if (settings.match) settings.target = Number($("target").value);
    if (SEED !== null) settings.seed = SEED;
    const old = game;
    game = await call("POST", "/games", settings);
    if (old) call("DELETE", `/games/${old.id}`).catch(() => {});
    return `Dealt, against ${game.settings.level} bots.`;
  });
}

// After a failure the page could not recover from at once (the server unreachable):
// fetch the game as it is and go on from there.
async function retry() {
  if (busy || !game) return;
  await act(async () => {
    game = await call("GET", `/games/${game.id}`);
    return "Going on.";
  });
}

async function nextHand() {
  if (busy || !game) return;
  await act(async () => {
    game = await call("POST", `/games/${game.id}/next`, undefined, game.version);
    return `Hand ${game.hand_no} dealt.`;
  });
}

// -- the settings form ---------------------------------------------------------------------

const currentPreset = () => options.presets.find((p) => p.name === $("preset").value);

function levelsFor() {
  const preset = currentPreset();
  const players = $("players").value;
  const key = players === "4" && $("teams").checked ? "4t" : players;
  // A trained bot plays its configuration's rules only, its match target included.
  const changed = $("match").checked && Number($("target").value) !== preset.target;
  return preset.levels[key].filter((level) => !changed || ["random", "greedy"].includes(level));
}

function optionOf(name, title) {
  const option = document.createElement("option");
  option.value = name;
  option.textContent = name;
  if (title !== undefined) option.title = title;
  return option;
}

function syncForm(changed, byPerson = false) {
  if (!options) return;
  const preset = currentPreset();
  if (changed === "preset") {
    $("players").value = String(preset.default_players);
    $("target").value = String(preset.target);
  }
  $("teams").disabled = $("players").value !== "4";
  if ($("teams").disabled) $("teams").checked = false;
  $("target").disabled = !$("match").checked;
  const level = $("level").value;
  const levels = levelsFor();
  $("level").replaceChildren(...levels.map((name) => optionOf(name, options.levels[name])));
  $("level").value = levels.includes(level) ? level : levels.length ? levels[levels.length - 1] : "";
  // A level the new table has no bot for is replaced: say so, rather than deal with
  // another level than the one picked without a word.
  if (byPerson && level && !levels.includes(level)) {
    const why = $("match").checked && Number($("target").value) !== preset.target
      ? `plays ${preset.name} to its own target, ${preset.target}, only`
      : "has no bot for this table";
    say(`Level ${level} ${why}: ${$("level").value || "no level"} instead.`);
  }
  document.querySelectorAll(".sum").forEach((node) => (node.textContent = String(preset.link_sum)));
}

// The address options, each checked: one the page cannot use falls back to its
// default, and every such one is named, with what is allowed, in one notice.
function readAddress() {
  const notes = [];
  const shown = (value) => (value.length > 40 ? `${value.slice(0, 40)}…` : value);
  const refuse = (name, why, allowed, instead) =>
    notes.push(`${name}=${shown(params.get(name))} ${why}; allowed: ${allowed}; ${instead}.`);
  for (const name of new Set(params.keys())) {
    if (!ADDRESS_OPTIONS.includes(name)) {
      notes.push(`${shown(name)} is no address option; allowed: ${ADDRESS_OPTIONS.join(", ")}; ignored.`);
    }
  }
  const pause = params.get("pause");
  if (pause !== null) {
    if (DIGITS.test(pause) && Number(pause) <= MAX_PAUSE) PAUSE = Number(pause);
    else refuse("pause", "is not a pause", `milliseconds, 0 to ${MAX_PAUSE} in the digits 0-9`, `using ${PAUSE}`);
  }
  const seed = params.get("seed");
  if (seed !== null) {
    // Number() would read "abc" as NaN (sent as null: a random seed) and round a
    // seed past 2**53, so a seed is digits only, and at most that.
    if (DIGITS.test(seed) && Number(seed) <= Number.MAX_SAFE_INTEGER) SEED = Number(seed);
    else {
      refuse("seed", "is not a seed", `a whole number, 0 to ${Number.MAX_SAFE_INTEGER} in the digits 0-9`,
        "ignored: every deal gets a new random seed");
    }
  }
  const preset = params.get("preset");
  if (preset !== null) {
    const names = options.presets.map((p) => p.name);
    if (names.includes(preset)) $("preset").value = preset;
    else refuse("preset", "is not offered", names.join(", "), `using ${$("preset").value}`);
  }
  syncForm("preset");
  const players = params.get("players");
  if (players !== null) {
    const counts = currentPreset().players.map(String);
    if (counts.includes(players)) $("players").value = players;
    else refuse("players", `is not offered for ${$("preset").value}`, counts.join(", "), `using ${$("players").value}`);
  }
  syncForm("players");
  const level = params.get("level");
  if (level !== null) {
    const levels = levelsFor();
    if (levels.includes(level)) $("level").value = level;
    else {
      refuse("level", `is not offered for ${$("preset").value} with ${$("players").value} players`,
        levels.join(", ") || "none on this server", `using ${$("level").value || "none"}`);
    }
  }
  $("notice").textContent = notes.length ? `⚠ ${notes.join(" ")}` : "";
  $("notice").hidden = !notes.length;
}

async function start() {
  // The handlers first: whatever goes wrong below, Deal never submits the form.
  $("settings").addEventListener("submit", deal);
  $("preset").addEventListener("change", () => syncForm("preset", true));
  $("players").addEventListener("change", () => syncForm("players", true));
  $("teams").addEventListener("change", () => syncForm("teams", true));
  $("match").addEventListener("change", () => syncForm("match", true));
  $("target").addEventListener("change", () => syncForm("target", true));
  $("draw").addEventListener("click", () => send(parseMove("draw")));
  $("pass").addEventListener("click", () => send(parseMove("pass")));
  $("next").addEventListener("click", nextHand);
  $("retry").addEventListener("click", retry);
  // Leaving or reloading the page ends its game: the server holds only so many, and
  // nothing on a new page can take this one up again.
  window.addEventListener("pagehide", () => {
    if (game) fetch(`/games/${game.id}`, { method: "DELETE", keepalive: true }).catch(() => {});
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      selected = null;
      $("chooser").hidden = true;
      render();
    }
  });
  try {
    options = await call("GET", "/games/options");
    $("preset").replaceChildren(...options.presets.map((p) => optionOf(p.name)));
    readAddress();
  } catch (error) {
    fail(error);
  } finally {
    document.body.dataset.ready = "1";
  }
}

start();
