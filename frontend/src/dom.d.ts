// The types of h()'s arguments (common.js), which JSDoc cannot write: a child is recursive.

/** A child of an element: arrays flattened; undefined, null and false left out; anything else as text. */
export type Kid = Leaf | readonly Kid[];
export type Leaf = Node | string | number | boolean | null | undefined;

/** An event listener; it may declare the event it expects (a KeyboardEvent, say): method syntax makes the parameter
 * bivariant. */
export type Listener = { bivarianceHack(event: Event): void }["bivarianceHack"];

/** An element's attributes: `class`, `on<event>` listeners, true as an empty attribute; undefined, null and false
 * left out; anything else as text. */
export type Attrs = { [name: string]: string | number | boolean | null | undefined | Listener };
