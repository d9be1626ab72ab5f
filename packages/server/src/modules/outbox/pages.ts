import { definePage } from '../../kit/pages.js';

definePage(
  'outbox-list',
  `<% layout('@layout') %>
<h1>Outbox</h1>
<p class="muted">Mail Pigeon delivered to the local outbox (<%= it.outboxDir %>), newest first. Nothing here left this machine. Signed in as <%= it.userEmail %>.</p>
<% if (it.messages.length === 0) { %>
<p>No messages yet. Send one with <code>POST /v1/send</code>.</p>
<% } else { %>
<table>
  <thead><tr><th scope="col">Sent</th><th scope="col">Project</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Subject</th></tr></thead>
  <tbody>
  <% it.messages.forEach(function (m) { %>
    <tr>
      <td><time datetime="<%= m.sentAt %>"><%= m.sentAt.replace('T', ' ').slice(0, 19) %></time></td>
      <td><%= m.projectName %></td>
      <td><%= m.from %></td>
      <td><%= m.to %></td>
      <td><a href="/outbox/<%= m.id %>"><%= m.subject %></a></td>
    </tr>
  <% }) %>
  </tbody>
</table>
<% } %>
<% if (it.nextPage) { %><p><a href="<%= it.nextPage %>">Older messages</a></p><% } %>`,
);

definePage(
  'outbox-message',
  `<% layout('@layout') %>
<p><a href="/outbox">← Outbox</a></p>
<h1><%= it.message.subject %></h1>
<table>
  <tr><th scope="row">From</th><td><%= it.message.from %></td></tr>
  <tr><th scope="row">To</th><td><%= it.message.to %></td></tr>
  <tr><th scope="row">Sent</th><td><%= it.message.sentAt %></td></tr>
  <tr><th scope="row">Project</th><td><%= it.message.projectName %></td></tr>
  <tr><th scope="row">Raw</th><td><a href="/outbox/<%= it.message.id %>/raw">Download the .eml</a></td></tr>
</table>
<h2>Rendered</h2>
<iframe title="Rendered message" sandbox src="/outbox/<%= it.message.id %>/html"></iframe>
<p class="muted">The open pixel is left out here so that viewing does not count as an open; links are as sent, so following one records a click.</p>
<h2>Headers</h2>
<pre><%= it.headers %></pre>`,
);

definePage(
  'outbox-missing',
  `<% layout('@layout') %>
<p><a href="/outbox">← Outbox</a></p>
<h1>Message not found</h1>
<p>There is no delivered message with that id in a project you are a member of.</p>`,
);
