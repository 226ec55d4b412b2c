// What every widget's module shares. _frontend.py puts this file in front of player.js, failures.js and dashboard.js,
// so each module is this code and its own in one ES module; a module never defines these names again.

// An element: attributes (`class`, `on<event>` listeners, true as an empty attribute; undefined, null and false
// left out) and children (arrays flattened; undefined, null and false left out; anything else as text).
function h(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false) continue;
    node.append(kid instanceof Node ? kid : String(kid));
  }
  return node;
}

// The synthetic-data banner a widget opens with (common.css shows one per output when widgets are stacked).
const banner = (text) => h("div", { class: "mf-banner", role: "note" }, text);

// Set a synced value and send it to the kernel.
function sync(model, key, value) {
  model.set(key, value);
  model.save_changes();
}

// Call each handler on its model event ({"change:rows": paint, ...}) until the function returned is called.
function listen(model, handlers) {
  for (const [event, handler] of Object.entries(handlers)) model.on(event, handler);
  return () => { for (const [event, handler] of Object.entries(handlers)) model.off(event, handler); };
}
