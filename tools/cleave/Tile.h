//===- Tile.h - `cleave tile`: marked loop nests to tiled CUDA --*- C++ -*-===//
//
// Part of Cleave's driver (docs/tile.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TOOLS_TILE_H
#define CLEAVE_TOOLS_TILE_H

namespace cleave {

/// Whether the command line named the `tile` subcommand.
bool tileRequested();

/// Runs `cleave tile` with its parsed options. Returns the exit code.
int runTile();

} // namespace cleave

#endif
