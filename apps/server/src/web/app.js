// Quiver web UI: plain ES module, no build step. Talks to the REST + SSE API of the same server.
const $ = (selector) => document.querySelector(selector);

const token = (() => {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) sessionStorage.setItem('quiver-token', fromHash);
  return sessionStorage.getItem('quiver-token');
})();

function headers(extra = {}) {
  return token ? { ...extra, authorization: `Bearer ${token}` } : extra;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(options.headers) });
  const body = await response.json().catch(() => ({}));
  if (!response.ok && response.status !== 422)
    throw new Error(body.error?.message ?? `HTTP ${response.status}`);
  return body;
}

/** POST and read a server-sent event stream: calls onEvent(name, data) per event. */
async function postStream(path, body, onEvent, signal) {
  const response = await fetch(path, {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) {
    const error = await response.json().catch(() => ({}));
    throw new Error(error.error?.message ?? `HTTP ${response.status}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let boundary;
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      let event = 'message';
      const data = [];
      for (const line of raw.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(event, JSON.parse(data.join('\n')));
    }
  }
}

// ---------------------------------------------------------------- rendering

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function blockNodes(response) {
  const nodes = [];
  let text = '';
  const flush = () => {
    if (text) nodes.push(element('pre', {}, text));
    text = '';
  };
  for (const block of response.content ?? []) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'json') text += JSON.stringify(block.value, null, 2);
    else if (block.type === 'image') {
      flush();
      const src = block.data ? `data:${block.mimeType};base64,${block.data}` : block.url;
      if (src) nodes.push(element('img', { src, alt: block.alt ?? block.path ?? 'image' }));
      else text += `[image saved at ${block.path}]`;
    } else if (block.type === 'file')
      text += `[file ${block.name ?? block.path ?? block.url ?? ''}]`;
  }
  flush();
  return nodes;
}

/** A collapsible card for one tool call; returns functions to stream into it. */
function toolCard(container, name, args) {
  const body = element('div', { class: 'card-body' });
  const summary = element('summary', {}, `⚙ ${name}`);
  const card = element(
    'details',
    { class: 'tool-card', 'data-tool': name },
    summary,
    element('pre', { class: 'args' }, `arguments: ${args}`),
    body,
  );
  container.append(card);
  container.scrollTop = container.scrollHeight;
  const chunks = [];
  return {
    chunk(chunk) {
      chunks.push(chunk);
      body.replaceChildren(...blockNodes({ content: chunks.flatMap((c) => c.content) }));
    },
    end(response) {
      body.replaceChildren(...blockNodes(response));
      card.classList.toggle('error', Boolean(response.isError));
      summary.textContent = `${response.isError ? '✗' : '✓'} ${name}`;
      card.dataset.status = response.isError ? 'error' : 'ok';
    },
  };
}

// ---------------------------------------------------------------- tools pane

let tools = [];

async function loadTools() {
  const data = await api(`/v1/tools?lang=${navigator.language.startsWith('zh') ? 'zh' : 'en'}`);
  tools = data.tools;
  const groups = $('#groups');
  groups.replaceChildren(
    ...data.groups.map((group) =>
      element(
        'label',
        { class: 'group', title: group.description },
        (() => {
          const box = element('input', { type: 'checkbox', 'data-group': group.name });
          box.checked = group.active;
          box.disabled = group.name === 'basic';
          box.addEventListener('change', async () => {
            await api(`/v1/groups/${encodeURIComponent(group.name)}`, {
              method: 'PATCH',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ active: box.checked }),
            });
            await loadTools();
          });
          return box;
        })(),
        ` ${group.name} `,
      ),
    ),
  );
  $('#tool-list').replaceChildren(
    ...tools.map((tool) =>
      element(
        'li',
        { class: tool.active ? '' : 'inactive', 'data-tool': tool.name },
        element('span', { class: 'name' }, tool.name),
        element('span', { class: 'desc' }, tool.description),
      ),
    ),
  );
  const select = $('#tool-select');
  const previous = select.value;
  select.replaceChildren(
    ...tools
      .filter((tool) => tool.active)
      .map((tool) => element('option', { value: tool.name }, tool.name)),
  );
  if (previous) select.value = previous;
}

$('#tool-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = $('#tool-select').value;
  const args = $('#tool-args').value || '{}';
  const card = toolCard($('#tool-results'), name, args);
  card.chunk({ content: [] });
  try {
    await postStream(
      `/v1/tools/${encodeURIComponent(name)}/call`,
      { arguments: args, sessionId: 'ui' },
      (kind, data) => {
        if (kind === 'chunk') card.chunk(data);
        else if (kind === 'end') card.end(data.response);
      },
    );
  } catch (error) {
    card.end({ content: [{ type: 'text', text: String(error.message ?? error) }], isError: true });
  }
});

// ---------------------------------------------------------------- browsing history

async function loadHistory() {
  const { pages, currentPageId } = await api('/v1/pages');
  $('#history').replaceChildren(
    ...pages.map((page) => {
      const box = element('input', {
        type: 'checkbox',
        'data-page': page.id,
        title: 'Use in chat',
      });
      box.checked = page.selected;
      box.disabled = page.status !== 'ready';
      box.addEventListener('change', async () => {
        await api(`/v1/pages/${encodeURIComponent(page.id)}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ selected: box.checked }),
        });
      });
      const link = element('a', { href: page.url, target: '_blank', rel: 'noopener' }, page.title);
      const status = element(
        'span',
        { class: `status ${page.status}`, title: page.error ?? '' },
        page.id === currentPageId ? `${page.status} · viewing` : page.status,
      );
      return element('li', { 'data-page': page.id, 'data-status': page.status }, box, link, status);
    }),
  );
  // Pages still being cached: look again shortly.
  if (pages.some((page) => page.status === 'caching')) setTimeout(loadHistory, 1000);
}

// ---------------------------------------------------------------- chat pane

const history = [];
const attachments = [];
let chatAvailable = false;

function addMessage(role, text) {
  const node = element('div', { class: `message ${role}` }, text);
  $('#messages').append(node);
  $('#messages').scrollTop = $('#messages').scrollHeight;
  return node;
}

$('#file-input').addEventListener('change', async (event) => {
  for (const file of event.target.files) {
    const form = new FormData();
    form.append('file', file);
    const chip = element('span', { class: 'chip' }, `… ${file.name}`);
    $('#attachments').append(chip);
    try {
      const uploaded = await api('/v1/files', { method: 'POST', body: form });
      attachments.push(uploaded);
      chip.textContent = `${file.name}`;
      chip.dataset.path = uploaded.path;
    } catch (error) {
      chip.textContent = `✗ ${file.name}: ${error.message}`;
    }
  }
  event.target.value = '';
});

async function runChat(body) {
  const send = $('#send');
  send.disabled = true;
  let current;
  const cards = new Map();
  try {
    await postStream('/v1/chat', body, (kind, data) => {
      switch (kind) {
        case 'text-delta':
          current ??= addMessage('assistant', '');
          current.textContent += data.text;
          break;
        case 'tool-start':
          current = undefined;
          cards.set(data.id, toolCard($('#messages'), data.name, data.arguments));
          break;
        case 'tool-chunk':
          cards.get(data.id)?.chunk(data.chunk);
          break;
        case 'tool-end':
          cards.get(data.id)?.end(data.response);
          break;
        case 'messages':
          history.splice(0, history.length, ...data.messages);
          break;
        case 'approval-required':
          showApprovals(data);
          break;
        case 'retrieval': {
          const sources = [...new Set(data.sources.map((item) => item.source.split('/').pop()))];
          if (sources.length)
            addMessage(
              'note',
              `Sources: ${data.sources.length} passages from ${sources.join(', ')}`,
            );
          break;
        }
        case 'error':
          addMessage('error', data.message);
          break;
      }
    });
  } catch (error) {
    addMessage('error', error.message);
  } finally {
    send.disabled = !chatAvailable;
  }
}

function showApprovals({ pending, state }) {
  const box = $('#approvals');
  box.hidden = false;
  const decisions = new Map();
  const rows = pending.map((call) => {
    const decide = (approved) => () => {
      decisions.set(call.toolCallId, { toolCallId: call.toolCallId, approved });
      row.querySelectorAll('button').forEach((button) => (button.disabled = true));
      row.dataset.decision = approved ? 'approved' : 'rejected';
      if (decisions.size === pending.length) {
        box.hidden = true;
        box.replaceChildren();
        runChat({
          messages: history,
          files: attachments.map((file) => file.path),
          resume: { state, decisions: [...decisions.values()] },
        });
      }
    };
    const row = element(
      'div',
      { class: 'approval', 'data-call': call.toolCallId },
      element('span', {}, 'Run '),
      element('code', {}, `${call.name}(${call.arguments})`),
      element('button', { onclick: decide(true), class: 'approve' }, 'Approve'),
      element('button', { onclick: decide(false), class: 'secondary reject' }, 'Reject'),
    );
    return row;
  });
  box.replaceChildren(element('strong', {}, 'Approval needed'), ...rows);
}

$('#chat-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $('#chat-input');
  const text = input.value.trim();
  if (!text || !chatAvailable) return;
  input.value = '';
  const content = [
    { type: 'text', text },
    ...attachments.map((file) => ({
      type: 'file',
      file: { path: file.path, filename: file.name },
    })),
  ];
  history.push({ role: 'user', content: attachments.length ? content : text });
  addMessage('user', text);
  runChat({ messages: history, files: attachments.map((file) => file.path) });
});

$('#chat-input').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('#chat-form').requestSubmit();
  }
});

// ---------------------------------------------------------------- start

(async () => {
  try {
    const info = await api('/v1/info');
    chatAvailable = info.chat.available;
    if (!chatAvailable) {
      const banner = $('#banner');
      banner.hidden = false;
      banner.textContent = `Chat is off: ${info.chat.reason} You can still run any tool from the panel on the right.`;
    }
    $('#send').disabled = !chatAvailable;
    await loadTools();
    if (info.pages) {
      $('#history-section').hidden = false;
      await loadHistory();
    }
    document.body.dataset.ready = 'true';
  } catch (error) {
    const banner = $('#banner');
    banner.hidden = false;
    banner.textContent = `Cannot reach the Quiver server: ${error.message}`;
  }
})();
