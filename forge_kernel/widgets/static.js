// Mounts the player module in a static page: no kernel, no widget manager. MF_ID names the page's element; its
// JSON sibling holds the state and the module's source, which is imported from a blob: URL.
const box = document.getElementById(MF_ID);
const { state, esm } = JSON.parse(document.getElementById(`${MF_ID}-data`).textContent);
const handlers = new Map();
const dirty = new Set();
const model = {
  get: (key) => state[key],
  set: (key, value) => { state[key] = value; dirty.add(key); },
  on: (event, fn) => { (handlers.get(event) || handlers.set(event, new Set()).get(event)).add(fn); },
  off: (event, fn) => { if (fn) handlers.get(event)?.delete(fn); else handlers.delete(event); },
  save_changes: () => {
    for (const key of dirty) for (const fn of handlers.get(`change:${key}`) || []) fn();
    dirty.clear();
  },
  send: () => {},
};
const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
try {
  (await import(url)).default.render({ model, el: box });
} finally {
  URL.revokeObjectURL(url);
}
