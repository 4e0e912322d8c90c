//===- TilePragma.cpp - `#pragma cleave tile` and its clauses -------------===//
//
// Part of Cleave (docs/tile.md).
//
//===----------------------------------------------------------------------===//
#include "TilePragma.h"

#include "clang/Lex/Preprocessor.h"

#include "llvm/ADT/StringSwitch.h"

using namespace clang;

namespace cleave::tile {
namespace {

class ClauseParser {
public:
  ClauseParser(Preprocessor &PP, PragmaSite &Site) : PP(PP), Site(Site) {
    PP.Lex(Tok);
  }

  /// Reads clauses up to the end of the line.
  void run() {
    bool SawTile = false, SawTechnique = false, SawSteps = false,
         SawAutotune = false;
    while (Site.Valid && Tok.isNot(tok::eod)) {
      IdentifierInfo *II = Tok.getIdentifierInfo();
      StringRef Name = II ? II->getName() : "";
      if (Name == "tile" && !SawTile) {
        SawTile = true;
        tileClause();
      } else if (Name == "technique" && !SawTechnique) {
        SawTechnique = true;
        techniqueClause();
      } else if (Name == "steps" && !SawSteps) {
        SawSteps = true;
        stepsClause();
      } else if (Name == "autotune" && !SawAutotune) {
        SawAutotune = true;
        autotuneClause();
      } else {
        error(II && (Name == "tile" || Name == "technique" || Name == "steps" ||
                     Name == "autotune")
                  ? "clause '" + Name.str() + "' given twice"
                  : std::string(
                        "expected a clause: tile(rows, cols), "
                        "technique(wavefront|timeskew|blocks), steps(n) or "
                        "autotune(on|off)"));
      }
    }
    while (Tok.isNot(tok::eod))
      PP.Lex(Tok);
    Site.End = Tok.getLocation();
  }

private:
  Preprocessor &PP;
  PragmaSite &Site;
  Token Tok;

  void error(const std::string &Msg) {
    if (!Site.Valid)
      return;
    DiagnosticsEngine &DE = PP.getDiagnostics();
    DE.Report(Tok.getLocation(), DE.getCustomDiagID(DiagnosticsEngine::Error,
                                                    "#pragma cleave tile: %0"))
        << Msg;
    Site.Valid = false;
  }

  bool expect(tok::TokenKind K, const char *What) {
    if (Tok.is(K)) {
      PP.Lex(Tok);
      return true;
    }
    error(std::string("expected ") + What);
    return false;
  }

  /// A positive integer of at most Max.
  std::optional<unsigned> number(unsigned Max, const char *What) {
    uint64_t V = 0;
    Token At = Tok;
    if (Tok.isNot(tok::numeric_constant) ||
        !PP.parseSimpleIntegerLiteral(Tok, V) || V == 0 || V > Max) {
      Tok = At; // report at the number, not after it
      error(std::string("expected the ") + What + ", an integer from 1 to " +
            std::to_string(Max));
      return std::nullopt;
    }
    // parseSimpleIntegerLiteral has read the next token.
    return unsigned(V);
  }

  void tileClause() {
    PP.Lex(Tok);
    if (!expect(tok::l_paren, "'(' after 'tile'"))
      return;
    // One thread per row of a tile: a block has at most 1024 threads.
    std::optional<unsigned> Rows = number(1024, "tile's rows");
    if (!Rows || !expect(tok::comma, "',' between the tile's rows and "
                                     "columns"))
      return;
    std::optional<unsigned> Cols = number(4096, "tile's columns");
    if (!Cols || !expect(tok::r_paren, "')' after the tile's columns"))
      return;
    Site.Tile = {*Rows, *Cols};
    Site.TileGiven = true;
  }

  void stepsClause() {
    PP.Lex(Tok);
    if (!expect(tok::l_paren, "'(' after 'steps'"))
      return;
    std::optional<unsigned> Steps = number(64, "time steps per tile");
    if (!Steps || !expect(tok::r_paren, "')' after the time steps"))
      return;
    Site.Steps = *Steps;
  }

  void autotuneClause() {
    PP.Lex(Tok);
    if (!expect(tok::l_paren, "'(' after 'autotune'"))
      return;
    IdentifierInfo *II = Tok.getIdentifierInfo();
    StringRef V = II ? II->getName() : "";
    if (V != "on" && V != "off")
      return error("expected 'on' or 'off'");
    Site.Autotune = V == "on";
    PP.Lex(Tok);
    expect(tok::r_paren, "')' after 'on' or 'off'");
  }

  void techniqueClause() {
    PP.Lex(Tok);
    if (!expect(tok::l_paren, "'(' after 'technique'"))
      return;
    IdentifierInfo *II = Tok.getIdentifierInfo();
    std::optional<Technique> T =
        llvm::StringSwitch<std::optional<Technique>>(II ? II->getName() : "")
            .Case("wavefront", Technique::Wavefront)
            .Case("timeskew", Technique::TimeSkew)
            .Case("blocks", Technique::Blocks)
            .Default(std::nullopt);
    if (!T)
      return error("expected 'wavefront', 'timeskew' or 'blocks'");
    Site.Tech = *T;
    PP.Lex(Tok);
    expect(tok::r_paren, "')' after the technique");
  }
};

} // namespace

void TilePragmaHandler::HandlePragma(Preprocessor &PP, PragmaIntroducer Intro,
                                     Token &) {
  PragmaSite Site;
  Site.Hash = Intro.Loc;
  ClauseParser(PP, Site).run();
  Sites.push_back(Site);
}

} // namespace cleave::tile
