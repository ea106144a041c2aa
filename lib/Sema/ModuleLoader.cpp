//===- ModuleLoader.cpp - Finding, reading and linking modules ------------===//
//
// A module is found by name under the search roots, read once, parsed, and
// its blocks registered by name; `use` declarations and qualified block
// references pull in further modules. Cycles among `use`s are reported after
// everything is loaded, so one run shows every missing module.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/ModuleLoader.h"

#include "linnet/Syntax/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>

using namespace linnet;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

bool isIdentifier(llvm::StringRef text) {
  if (text.empty() || !(llvm::isAlpha(text[0]) || text[0] == '_'))
    return false;
  return llvm::all_of(text,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::string realPath(llvm::StringRef p) {
  llvm::SmallString<256> real;
  if (fs::real_path(p, real))
    return p.str();
  return std::string(real.str());
}

} // namespace

std::optional<std::string>
linnet::moduleNameForPath(llvm::StringRef relativePath) {
  if (!relativePath.consume_back(".linnet"))
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> parts;
  relativePath.split(parts, '/');
  // `a/b/module.linnet` is the module `a.b`.
  if (parts.size() > 1 && parts.back() == "module")
    parts.pop_back();
  std::string name;
  for (llvm::StringRef part : parts) {
    if (!isIdentifier(part))
      return std::nullopt;
    if (!name.empty())
      name += '.';
    name += part.str();
  }
  return name;
}

/// The file of module `name` under `root`: `a/b.linnet` or
/// `a/b/module.linnet` for `a.b`, when it exists.
static std::optional<std::string> moduleFileUnder(llvm::StringRef root,
                                                  llvm::StringRef name) {
  std::string relative = name.str();
  std::replace(relative.begin(), relative.end(), '.', '/');
  llvm::SmallString<256> file(root), folderModule(root);
  path::append(file, relative + ".linnet");
  if (fs::is_regular_file(file))
    return std::string(file);
  path::append(folderModule, relative, kFolderModuleFile);
  if (fs::is_regular_file(folderModule))
    return std::string(folderModule);
  return std::nullopt;
}

std::string linnet::moduleNameOf(const ast::ModulePath &modulePath,
                                 const ModuleInfo &from) {
  std::string name = modulePath.relative ? from.package : "";
  for (const ast::Identifier &part : modulePath.parts) {
    if (!name.empty())
      name += '.';
    name += part.name;
  }
  return name;
}

ModuleInfo *ModuleLoader::addModule(llvm::StringRef name, llvm::StringRef path,
                                    std::unique_ptr<llvm::MemoryBuffer> buffer,
                                    Program &program) {
  auto module = std::make_unique<ModuleInfo>();
  module->name = name.str();
  module->path = path.str();
  llvm::StringRef package = name;
  if (path::filename(path) != kFolderModuleFile)
    package = package.contains('.') ? package.rsplit('.').first : "";
  module->package = package.str();
  module->bufferId =
      diags.getSourceMgr().AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  ModuleInfo *raw = module.get();
  program.modules.push_back(std::move(module));
  program.modulesByName[raw->name] = raw;

  raw->syntax = parseModule(raw->bufferId, diags);
  for (const ast::BlockDecl &syntax : raw->syntax.blocks) {
    auto [it, inserted] = raw->blocks.try_emplace(syntax.name.name, nullptr);
    if (!inserted) {
      diags.report(syntax.name.range, diag::DuplicateBlock, syntax.name.name,
                   raw->name);
      diags.report(it->second->syntax->name.range, diag::PreviousDeclaration,
                   syntax.name.name);
      continue;
    }
    auto block = std::make_unique<BlockDecl>();
    block->name = syntax.name.name;
    block->module = raw;
    block->syntax = &syntax;
    it->second = block.get();
    program.blocks.push_back(std::move(block));
  }
  loadDependencies(*raw, program);
  return raw;
}

ModuleInfo *ModuleLoader::loadFile(llvm::StringRef name, llvm::StringRef path,
                                   llvm::SMRange requestedAt,
                                   Program &program) {
  uint64_t size = 0;
  if (!fs::file_size(path, size) && size > kMaxSourceBytes) {
    diags.report(requestedAt, diag::FileTooLarge, path.str(), size,
                 kMaxSourceBytes);
    return nullptr;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    diags.report(requestedAt, diag::UnreadableFile, path.str(),
                 llvm::StringRef(buffer.getError().message()).lower());
    return nullptr;
  }
  // Keep the path as the user or the search root spelled it.
  auto copy =
      llvm::MemoryBuffer::getMemBufferCopy((*buffer)->getBuffer(), path);
  return addModule(name, path, std::move(copy), program);
}

ModuleInfo *ModuleLoader::findOrLoad(llvm::StringRef name,
                                     llvm::SMRange requestedAt,
                                     Program &program) {
  if (ModuleInfo *known = program.findModule(name))
    return known;
  for (const std::string &root : roots)
    if (std::optional<std::string> file = moduleFileUnder(root, name))
      return loadFile(name, *file, requestedAt, program);
  return nullptr;
}

void ModuleLoader::loadDependencies(ModuleInfo &module, Program &program) {
  for (const ast::UseDecl &use : module.syntax.uses) {
    std::string name = moduleNameOf(use.module, module);
    ModuleInfo *target = findOrLoad(name, use.module.range, program);
    if (!target) {
      diags.report(use.module.range, diag::UnknownModule, name);
      for (const ast::Identifier &imported : use.names)
        module.unresolvedImports.push_back(imported.name);
      continue;
    }
    checkStaysInPackage(module, use, *target);
    module.uses.push_back({target, use.module.range});
    for (const ast::Identifier &imported : use.names)
      module.imports.push_back({target, imported.name, imported.range});
  }
  // Qualified references (`std.nn.linear::Linear`) need their module too.
  for (const ast::BlockDecl &block : module.syntax.blocks)
    for (const ast::Member &member : block.members)
      if (auto *sub = boost::get<ast::SubMember>(&member))
        if (sub->block.module) {
          std::string name = moduleNameOf(*sub->block.module, module);
          if (!findOrLoad(name, sub->block.module->range, program))
            diags.report(sub->block.module->range, diag::UnknownModule, name);
        }
}

void ModuleLoader::checkStaysInPackage(const ModuleInfo &module,
                                       const ast::UseDecl &use,
                                       const ModuleInfo &target) {
  if (inputFolder.empty() || use.module.relative ||
      !llvm::StringRef(realPath(module.path)).starts_with(inputFolder + "/") ||
      llvm::StringRef(realPath(target.path)).starts_with(inputFolder + "/"))
    return;
  // `qwen3_5_moe.norm` from `my_variant/attention.linnet`: does the input
  // folder hold its own `norm.linnet` (or `norm/module.linnet`)?
  llvm::StringRef rest = target.name;
  if (!rest.contains('.'))
    return;
  rest = rest.split('.').second;
  if (!moduleFileUnder(inputFolder, rest))
    return;
  diags.report(use.module.range, diag::ImportLeavesPackage, target.name,
               target.path, inputPackage, "." + rest.str());
}

bool ModuleLoader::loadInput(llvm::StringRef input, Program &program) {
  bool isFolder = fs::is_directory(input);
  if (!isFolder && !fs::exists(input)) {
    diags.report(diag::UnreadableFile, input.str(),
                 "no such file or directory");
    return false;
  }
  // The input is named relative to the search root that holds it, or else
  // relative to its own parent folder, which becomes a root.
  std::string inputReal = realPath(input);
  std::string rootReal;
  for (const std::string &root : roots) {
    std::string candidate = realPath(root);
    if (llvm::StringRef(inputReal).starts_with(candidate + "/")) {
      rootReal = candidate;
      break;
    }
  }
  if (rootReal.empty()) {
    rootReal = std::string(path::parent_path(inputReal));
    roots.insert(roots.begin(), rootReal);
  }
  if (isFolder) {
    llvm::StringRef relative(inputReal);
    if (relative.consume_front(rootReal + "/"))
      if (std::optional<std::string> name =
              moduleNameForPath(relative.str() + ".linnet")) {
        inputFolder = inputReal;
        inputPackage = *name;
      }
  }

  std::vector<std::string> files;
  if (isFolder) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(input, ec), end; it != end && !ec;
         it.increment(ec))
      if (path::extension(it->path()) == ".linnet" &&
          fs::is_regular_file(it->path()))
        files.push_back(it->path());
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      diags.report(diag::NoSourceFiles, input.str());
      return false;
    }
  } else {
    files.push_back(input.str());
  }

  bool loadedAny = false;
  for (const std::string &file : files) {
    std::string real = realPath(file);
    llvm::StringRef relative(real);
    if (!relative.consume_front(rootReal + "/")) {
      diags.report(diag::InvalidModuleName, file);
      continue;
    }
    std::optional<std::string> name = moduleNameForPath(relative);
    if (!name) {
      diags.report(diag::InvalidModuleName, file);
      continue;
    }
    ModuleInfo *module = program.findModule(*name);
    if (!module)
      module = loadFile(*name, file, llvm::SMRange(), program);
    if (module) {
      module->isInput = true;
      loadedAny = true;
    }
  }
  return loadedAny;
}

ModuleInfo *ModuleLoader::loadText(llvm::StringRef name, llvm::StringRef text,
                                   Program &program) {
  ModuleInfo *module = addModule(
      name, name, llvm::MemoryBuffer::getMemBufferCopy(text, name), program);
  module->isInput = true;
  return module;
}

void ModuleLoader::resolveImports(Program &program) {
  for (const auto &module : program.modules)
    for (const ImportRef &import : module->imports)
      if (!import.module->blocks.count(import.name))
        diags.report(import.loc, diag::UnknownImport, import.module->name,
                     import.name);

  // Depth-first search over `use` edges; a back edge closes a cycle.
  enum State { Unvisited, Active, Done };
  std::map<const ModuleInfo *, State> state;
  std::vector<const ModuleInfo *> stack;
  std::function<void(const ModuleInfo *)> visit =
      [&](const ModuleInfo *module) {
        state[module] = Active;
        stack.push_back(module);
        for (const auto &[target, loc] : module->uses) {
          if (state[target] == Active) {
            std::string cycle;
            auto start = std::find(stack.begin(), stack.end(), target);
            for (auto it = start; it != stack.end(); ++it)
              cycle += "`" + (*it)->name + "` -> ";
            cycle += "`" + target->name + "`";
            diags.report(loc, diag::ImportCycle, cycle);
          } else if (state[target] == Unvisited) {
            visit(target);
          }
        }
        stack.pop_back();
        state[module] = Done;
      };
  for (const auto &module : program.modules)
    if (state[module.get()] == Unvisited)
      visit(module.get());
}
