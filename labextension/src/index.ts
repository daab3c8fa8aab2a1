/**
 * ludwig-nb: a left-area JupyterLab panel with GPU cards and every kernel's training runs.
 */

import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { DocumentWidget } from '@jupyterlab/docregistry';
import { Kernel } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { Poll } from '@lumino/polling';
import { ISignal } from '@lumino/signaling';

import { serverApi, snapshotApi } from './api';
import { SidebarModel } from './model';
import { LiveWidgets, NotebookLike, SnapshotRefresher } from './notebook_refresh';
import { PANEL_ID, SidebarPanel } from './panel';

const PLUGIN_ID = 'ludwig-nb:plugin';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16"><g class="jp-icon3" fill="#616161">' +
  '<path d="M3 5h18v14H3zM5 7v10h14V7zm2 8h2v-5H7zm4 0h2V9h-2zm4 0h2v-3h-2z"/></g></svg>';

export const ludwigIcon = new LabIcon({ name: 'ludwig-nb:gpu', svgstr: ICON_SVG });

/** The notebooks open in the main area, with their kernels (duck-typed: see notebook_refresh.ts). */
function openNotebooks(
  shell: JupyterFrontEnd.IShell
): Map<NotebookLike, Kernel.IKernelConnection | null> {
  const found = new Map<NotebookLike, Kernel.IKernelConnection | null>();
  for (const widget of shell.widgets('main')) {
    if (!(widget instanceof DocumentWidget) || !widget.context.isReady) {
      continue;
    }
    const model = widget.context.model as Partial<NotebookLike>;
    if (model.cells && typeof model.cells.get === 'function') {
      found.set(model as NotebookLike, widget.context.sessionContext.session?.kernel ?? null);
    }
  }
  return found;
}

const WIDGET_COMM_TARGET = 'jupyter.widget';
const COMM_INFO_WAIT_MS = 3000;

/**
 * The widget models a notebook's kernel holds: its open `jupyter.widget` comms (a comm's id is
 * its model's id). One question per kernel at a time; a busy kernel answers after its cell, so
 * the refresher waits at most COMM_INFO_WAIT_MS and hears "unknown" (null) meanwhile.
 */
function kernelWidgets(
  kernels: () => Map<NotebookLike, Kernel.IKernelConnection | null>
): LiveWidgets {
  const asking = new WeakMap<Kernel.IKernelConnection, Promise<Set<string> | null>>();
  const ask = (kernel: Kernel.IKernelConnection) =>
    kernel
      .requestCommInfo({ target_name: WIDGET_COMM_TARGET })
      .then(reply =>
        reply.content.status === 'ok' ? new Set(Object.keys(reply.content.comms)) : null
      )
      .catch(() => null)
      .finally(() => asking.delete(kernel));
  return async notebook => {
    const kernel = kernels().get(notebook);
    if (!kernel || kernel.isDisposed) {
      return null;
    }
    let pending = asking.get(kernel);
    if (!pending) {
      pending = ask(kernel);
      asking.set(kernel, pending);
    }
    const late = new Promise<null>(resolve => setTimeout(() => resolve(null), COMM_INFO_WAIT_MS));
    return Promise.race([pending, late]);
  };
}

/** The path of the document in focus (null: none, or not a document). */
function currentPath(shell: ILabShell): string | null {
  const current = shell.currentWidget;
  return current instanceof DocumentWidget ? current.context.path : null;
}

/**
 * Reopened notebooks: a saved run snapshot whose run has gone on since the save is replaced
 * by the run's current one from its run directory, or by the live dashboard itself while the
 * notebook's kernel still holds it (see notebook_refresh.ts). Needs only the main area, so it
 * works in JupyterLab and in Notebook 7.
 */
function startSnapshotRefresh(shell: JupyterFrontEnd.IShell): Poll {
  const refresher = new SnapshotRefresher({
    api: snapshotApi,
    liveWidgets: kernelWidgets(() => openNotebooks(shell))
  });
  const poll = new Poll({
    factory: () => refresher.refresh(openNotebooks(shell).keys()),
    frequency: { interval: 2000, backoff: false },
    standby: 'when-hidden',
    name: 'ludwig-nb:snapshots'
  });
  // JupyterLab's and Notebook 7's shells both signal a change of the widget in focus
  const changed = (shell as unknown as { currentChanged?: ISignal<unknown, unknown> })
    .currentChanged;
  changed?.connect(() => void poll.refresh());
  return poll;
}

const refreshPlugin: JupyterFrontEndPlugin<void> = {
  id: 'ludwig-nb:notebook-refresh',
  description: "Reopened notebooks show each run's current state, or its live dashboard again.",
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    startSnapshotRefresh(app.shell);
  }
};

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'GPU cards and the training runs of every kernel, with Stop / Pause / Resume.',
  autoStart: true,
  requires: [ILabShell],
  optional: [ISettingRegistry, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    shell: ILabShell,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const model = new SidebarModel({ api: serverApi });
    const panel = new SidebarPanel(model);
    panel.title.icon = ludwigIcon;
    shell.add(panel, 'left', { rank: 900 });
    // the "this notebook" filter follows the document in focus
    const follow = () => {
      const path = currentPath(shell);
      if (path !== null && path.endsWith('.ipynb') && path !== model.runListOptions.notebook) {
        model.runListOptions = { ...model.runListOptions, notebook: path };
      }
    };
    shell.currentChanged.connect(follow);
    follow();
    restorer?.add(panel, PANEL_ID);

    let interval = 2000;
    const start = () => model.startPolling({ interval, isHidden: () => !panel.isVisible });
    start();

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () => {
            interval = Math.max(250, 1000 * (settings.get('refreshInterval').composite as number));
            model.viewOptions = {
              temperatureWarnMargin: settings.get('temperatureWarnMargin').composite as number
            };
            start();
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => console.warn('ludwig-nb: settings not loaded, using defaults', reason));
    }
  }
};

export default [plugin, refreshPlugin];
