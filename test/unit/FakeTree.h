//===- FakeTree.h - A temporary directory tree for file-reading tests -----===//
//
// Code that reads /sys or /proc takes its root as an argument; tests give
// it a tree of their own, made fresh for each test and removed after.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TEST_UNIT_FAKETREE_H
#define COLLC_TEST_UNIT_FAKETREE_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

class FakeTree : public ::testing::Test {
protected:
  void SetUp() override {
    std::string name = ::testing::TempDir() + "collc-tree-XXXXXX";
    ASSERT_NE(mkdtemp(name.data()), nullptr);
    root = name;
  }
  void TearDown() override { std::filesystem::remove_all(root); }

  /// Writes `text` and a newline to `path` below the root, making its
  /// directories.
  void write(const std::string &path, const std::string &text) {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + path).parent_path());
    std::ofstream(root + "/" + path) << text << "\n";
  }

  std::string root;
};

#endif // COLLC_TEST_UNIT_FAKETREE_H
