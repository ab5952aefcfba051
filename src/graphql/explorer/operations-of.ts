/**
 * Browser code for the explorer's page (plain JavaScript, inlined as is): the operations of a
 * document read from its text, each `{type, name}`. GraphiQL settles the operation name and the
 * parsed document a moment after each edit, so Run pressed at once would send the previous ones;
 * the text itself is never stale. Comments, strings and anything nested are skipped.
 */
export const OPERATIONS_OF = `function operationsOf(text) {
  var operations = [], depth = 0, pending = null, i = 0, name = /[_A-Za-z][_0-9A-Za-z]*/y;
  while (i < text.length) {
    var c = text[i];
    if (c === '#') {
      i = text.indexOf('\\n', i);
      if (i < 0) break;
    } else if (c === '"' && text.startsWith('"""', i)) {
      var close = text.indexOf('"""', i + 3);
      i = close < 0 ? text.length : close + 3;
    } else if (c === '"') {
      for (i += 1; i < text.length && text[i] !== '"' && text[i] !== '\\n'; i += text[i] === '\\\\' ? 2 : 1);
      i += 1;
    } else if (c === '{' || c === '(' || c === '[') {
      // A definition's selection set: what came before it named the definition (none: a query).
      if (depth === 0 && c === '{') {
        operations.push(pending || { type: 'query' });
        pending = null;
      }
      depth += 1;
      i += 1;
    } else if (c === '}' || c === ')' || c === ']') {
      depth -= 1;
      i += 1;
    } else {
      name.lastIndex = i + (c === '@' ? 1 : 0);
      var word = name.exec(text);
      if (!word) { i += 1; continue; }
      if (depth === 0 && c !== '@') {
        if (!pending && /^(query|mutation|subscription|fragment)$/.test(word[0])) pending = { type: word[0] };
        else if (pending && pending.name === undefined) pending.name = word[0];
      }
      i = name.lastIndex;
    }
  }
  return operations.filter(function (operation) { return operation.type !== 'fragment'; });
}`;
