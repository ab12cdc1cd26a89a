// Jest globalTeardown of the end-to-end project: removes the snapshot database of this run.
'use strict';
const { removeSnapshot } = require('./snapshot');

module.exports = removeSnapshot;
