// The names a page defines for a module, outside it.

/** A Vega view, as far as the dashboard uses it. */
interface VegaView {
  addEventListener(type: string, handler: (event: Event, item: { datum?: Record<string, string> } | null) => void): void;
  finalize(): void;
}

/** vega-embed: vl-convert bundles it with the dashboard's module (dashboard.py), under this name. */
declare function vegaEmbed(el: HTMLElement, spec: object, options: object): Promise<{ view: VegaView }>;

/** The id of the static page's element (page.py writes `const MF_ID = "..."` before static.js). */
declare const MF_ID: string;
