// The MSCCL runtime's limits, enforced by coll-verify-plan with
// msccl-limits=true: channels 0 .. 31, 32 sending and 32 receiving
// threadblocks per channel on a rank, 256 steps per threadblock. Without the
// option the same plans pass (the second RUN line only checks the
// passing ones and the ones that are correct apart from the limits).
//
// RUN: collc-opt %s --coll-verify-plan=msccl-limits=true -split-input-file -verify-diagnostics
// RUN: collc-opt %s --coll-verify-plan -split-input-file -o /dev/null

// Channel 40.
// expected-error@+1 {{the plan uses channels up to 40; the MSCCL runtime allows 32 channels}}
coll.plan @chan40 : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(40) {
      coll.send in[0][0]
      coll.recv -> out[0][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(40) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}

// -----

// Channel 32, one past the last.
// expected-error@+1 {{the plan uses channels up to 32; the MSCCL runtime allows 32 channels}}
coll.plan @chan32 : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(32) {
      coll.send in[0][0]
      coll.recv -> out[0][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(32) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}

// -----

// 33 sending threadblocks on channel 0 of one rank: a flat broadcast from
// rank 0 to 33 peers. (The message reports the most sending and the most
// receiving threadblocks of any rank, here of different ranks.)
// expected-error-re@+1 {{channel 0 has 33 sending {{.*}}; the MSCCL runtime allows 32 of each}}
coll.plan @fanout33 : broadcast ranks(34) chunks(1) root(0) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 send(2) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 2 send(3) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 3 send(4) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 4 send(5) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 5 send(6) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 6 send(7) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 7 send(8) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 8 send(9) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 9 send(10) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 10 send(11) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 11 send(12) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 12 send(13) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 13 send(14) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 14 send(15) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 15 send(16) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 16 send(17) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 17 send(18) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 18 send(19) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 19 send(20) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 20 send(21) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 21 send(22) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 22 send(23) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 23 send(24) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 24 send(25) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 25 send(26) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 26 send(27) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 27 send(28) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 28 send(29) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 29 send(30) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 30 send(31) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 31 send(32) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 32 send(33) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 33 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[2][0]
    }
  }
  coll.rank 3 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[3][0]
    }
  }
  coll.rank 4 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[4][0]
    }
  }
  coll.rank 5 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[5][0]
    }
  }
  coll.rank 6 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[6][0]
    }
  }
  coll.rank 7 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[7][0]
    }
  }
  coll.rank 8 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[8][0]
    }
  }
  coll.rank 9 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[9][0]
    }
  }
  coll.rank 10 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[10][0]
    }
  }
  coll.rank 11 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[11][0]
    }
  }
  coll.rank 12 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[12][0]
    }
  }
  coll.rank 13 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[13][0]
    }
  }
  coll.rank 14 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[14][0]
    }
  }
  coll.rank 15 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[15][0]
    }
  }
  coll.rank 16 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[16][0]
    }
  }
  coll.rank 17 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[17][0]
    }
  }
  coll.rank 18 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[18][0]
    }
  }
  coll.rank 19 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[19][0]
    }
  }
  coll.rank 20 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[20][0]
    }
  }
  coll.rank 21 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[21][0]
    }
  }
  coll.rank 22 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[22][0]
    }
  }
  coll.rank 23 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[23][0]
    }
  }
  coll.rank 24 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[24][0]
    }
  }
  coll.rank 25 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[25][0]
    }
  }
  coll.rank 26 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[26][0]
    }
  }
  coll.rank 27 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[27][0]
    }
  }
  coll.rank 28 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[28][0]
    }
  }
  coll.rank 29 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[29][0]
    }
  }
  coll.rank 30 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[30][0]
    }
  }
  coll.rank 31 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[31][0]
    }
  }
  coll.rank 32 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[32][0]
    }
  }
  coll.rank 33 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[33][0]
    }
  }
}

// -----

// 32 sending threadblocks on channel 0 of one rank: allowed.
coll.plan @fanout32 : broadcast ranks(33) chunks(1) root(0) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 send(2) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 2 send(3) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 3 send(4) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 4 send(5) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 5 send(6) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 6 send(7) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 7 send(8) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 8 send(9) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 9 send(10) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 10 send(11) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 11 send(12) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 12 send(13) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 13 send(14) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 14 send(15) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 15 send(16) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 16 send(17) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 17 send(18) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 18 send(19) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 19 send(20) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 20 send(21) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 21 send(22) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 22 send(23) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 23 send(24) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 24 send(25) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 25 send(26) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 26 send(27) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 27 send(28) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 28 send(29) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 29 send(30) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 30 send(31) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 31 send(32) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 33 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[2][0]
    }
  }
  coll.rank 3 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[3][0]
    }
  }
  coll.rank 4 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[4][0]
    }
  }
  coll.rank 5 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[5][0]
    }
  }
  coll.rank 6 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[6][0]
    }
  }
  coll.rank 7 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[7][0]
    }
  }
  coll.rank 8 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[8][0]
    }
  }
  coll.rank 9 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[9][0]
    }
  }
  coll.rank 10 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[10][0]
    }
  }
  coll.rank 11 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[11][0]
    }
  }
  coll.rank 12 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[12][0]
    }
  }
  coll.rank 13 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[13][0]
    }
  }
  coll.rank 14 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[14][0]
    }
  }
  coll.rank 15 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[15][0]
    }
  }
  coll.rank 16 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[16][0]
    }
  }
  coll.rank 17 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[17][0]
    }
  }
  coll.rank 18 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[18][0]
    }
  }
  coll.rank 19 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[19][0]
    }
  }
  coll.rank 20 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[20][0]
    }
  }
  coll.rank 21 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[21][0]
    }
  }
  coll.rank 22 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[22][0]
    }
  }
  coll.rank 23 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[23][0]
    }
  }
  coll.rank 24 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[24][0]
    }
  }
  coll.rank 25 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[25][0]
    }
  }
  coll.rank 26 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[26][0]
    }
  }
  coll.rank 27 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[27][0]
    }
  }
  coll.rank 28 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[28][0]
    }
  }
  coll.rank 29 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[29][0]
    }
  }
  coll.rank 30 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[30][0]
    }
  }
  coll.rank 31 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[31][0]
    }
  }
  coll.rank 32 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[32][0]
    }
  }
}

// -----

// 256 steps in a threadblock: allowed.
coll.plan @steps256 : allgather ranks(2) chunks(128) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      coll.recv -> out[0][128]
      coll.send in[0][1]
      coll.recv -> out[0][129]
      coll.send in[0][2]
      coll.recv -> out[0][130]
      coll.send in[0][3]
      coll.recv -> out[0][131]
      coll.send in[0][4]
      coll.recv -> out[0][132]
      coll.send in[0][5]
      coll.recv -> out[0][133]
      coll.send in[0][6]
      coll.recv -> out[0][134]
      coll.send in[0][7]
      coll.recv -> out[0][135]
      coll.send in[0][8]
      coll.recv -> out[0][136]
      coll.send in[0][9]
      coll.recv -> out[0][137]
      coll.send in[0][10]
      coll.recv -> out[0][138]
      coll.send in[0][11]
      coll.recv -> out[0][139]
      coll.send in[0][12]
      coll.recv -> out[0][140]
      coll.send in[0][13]
      coll.recv -> out[0][141]
      coll.send in[0][14]
      coll.recv -> out[0][142]
      coll.send in[0][15]
      coll.recv -> out[0][143]
      coll.send in[0][16]
      coll.recv -> out[0][144]
      coll.send in[0][17]
      coll.recv -> out[0][145]
      coll.send in[0][18]
      coll.recv -> out[0][146]
      coll.send in[0][19]
      coll.recv -> out[0][147]
      coll.send in[0][20]
      coll.recv -> out[0][148]
      coll.send in[0][21]
      coll.recv -> out[0][149]
      coll.send in[0][22]
      coll.recv -> out[0][150]
      coll.send in[0][23]
      coll.recv -> out[0][151]
      coll.send in[0][24]
      coll.recv -> out[0][152]
      coll.send in[0][25]
      coll.recv -> out[0][153]
      coll.send in[0][26]
      coll.recv -> out[0][154]
      coll.send in[0][27]
      coll.recv -> out[0][155]
      coll.send in[0][28]
      coll.recv -> out[0][156]
      coll.send in[0][29]
      coll.recv -> out[0][157]
      coll.send in[0][30]
      coll.recv -> out[0][158]
      coll.send in[0][31]
      coll.recv -> out[0][159]
      coll.send in[0][32]
      coll.recv -> out[0][160]
      coll.send in[0][33]
      coll.recv -> out[0][161]
      coll.send in[0][34]
      coll.recv -> out[0][162]
      coll.send in[0][35]
      coll.recv -> out[0][163]
      coll.send in[0][36]
      coll.recv -> out[0][164]
      coll.send in[0][37]
      coll.recv -> out[0][165]
      coll.send in[0][38]
      coll.recv -> out[0][166]
      coll.send in[0][39]
      coll.recv -> out[0][167]
      coll.send in[0][40]
      coll.recv -> out[0][168]
      coll.send in[0][41]
      coll.recv -> out[0][169]
      coll.send in[0][42]
      coll.recv -> out[0][170]
      coll.send in[0][43]
      coll.recv -> out[0][171]
      coll.send in[0][44]
      coll.recv -> out[0][172]
      coll.send in[0][45]
      coll.recv -> out[0][173]
      coll.send in[0][46]
      coll.recv -> out[0][174]
      coll.send in[0][47]
      coll.recv -> out[0][175]
      coll.send in[0][48]
      coll.recv -> out[0][176]
      coll.send in[0][49]
      coll.recv -> out[0][177]
      coll.send in[0][50]
      coll.recv -> out[0][178]
      coll.send in[0][51]
      coll.recv -> out[0][179]
      coll.send in[0][52]
      coll.recv -> out[0][180]
      coll.send in[0][53]
      coll.recv -> out[0][181]
      coll.send in[0][54]
      coll.recv -> out[0][182]
      coll.send in[0][55]
      coll.recv -> out[0][183]
      coll.send in[0][56]
      coll.recv -> out[0][184]
      coll.send in[0][57]
      coll.recv -> out[0][185]
      coll.send in[0][58]
      coll.recv -> out[0][186]
      coll.send in[0][59]
      coll.recv -> out[0][187]
      coll.send in[0][60]
      coll.recv -> out[0][188]
      coll.send in[0][61]
      coll.recv -> out[0][189]
      coll.send in[0][62]
      coll.recv -> out[0][190]
      coll.send in[0][63]
      coll.recv -> out[0][191]
      coll.send in[0][64]
      coll.recv -> out[0][192]
      coll.send in[0][65]
      coll.recv -> out[0][193]
      coll.send in[0][66]
      coll.recv -> out[0][194]
      coll.send in[0][67]
      coll.recv -> out[0][195]
      coll.send in[0][68]
      coll.recv -> out[0][196]
      coll.send in[0][69]
      coll.recv -> out[0][197]
      coll.send in[0][70]
      coll.recv -> out[0][198]
      coll.send in[0][71]
      coll.recv -> out[0][199]
      coll.send in[0][72]
      coll.recv -> out[0][200]
      coll.send in[0][73]
      coll.recv -> out[0][201]
      coll.send in[0][74]
      coll.recv -> out[0][202]
      coll.send in[0][75]
      coll.recv -> out[0][203]
      coll.send in[0][76]
      coll.recv -> out[0][204]
      coll.send in[0][77]
      coll.recv -> out[0][205]
      coll.send in[0][78]
      coll.recv -> out[0][206]
      coll.send in[0][79]
      coll.recv -> out[0][207]
      coll.send in[0][80]
      coll.recv -> out[0][208]
      coll.send in[0][81]
      coll.recv -> out[0][209]
      coll.send in[0][82]
      coll.recv -> out[0][210]
      coll.send in[0][83]
      coll.recv -> out[0][211]
      coll.send in[0][84]
      coll.recv -> out[0][212]
      coll.send in[0][85]
      coll.recv -> out[0][213]
      coll.send in[0][86]
      coll.recv -> out[0][214]
      coll.send in[0][87]
      coll.recv -> out[0][215]
      coll.send in[0][88]
      coll.recv -> out[0][216]
      coll.send in[0][89]
      coll.recv -> out[0][217]
      coll.send in[0][90]
      coll.recv -> out[0][218]
      coll.send in[0][91]
      coll.recv -> out[0][219]
      coll.send in[0][92]
      coll.recv -> out[0][220]
      coll.send in[0][93]
      coll.recv -> out[0][221]
      coll.send in[0][94]
      coll.recv -> out[0][222]
      coll.send in[0][95]
      coll.recv -> out[0][223]
      coll.send in[0][96]
      coll.recv -> out[0][224]
      coll.send in[0][97]
      coll.recv -> out[0][225]
      coll.send in[0][98]
      coll.recv -> out[0][226]
      coll.send in[0][99]
      coll.recv -> out[0][227]
      coll.send in[0][100]
      coll.recv -> out[0][228]
      coll.send in[0][101]
      coll.recv -> out[0][229]
      coll.send in[0][102]
      coll.recv -> out[0][230]
      coll.send in[0][103]
      coll.recv -> out[0][231]
      coll.send in[0][104]
      coll.recv -> out[0][232]
      coll.send in[0][105]
      coll.recv -> out[0][233]
      coll.send in[0][106]
      coll.recv -> out[0][234]
      coll.send in[0][107]
      coll.recv -> out[0][235]
      coll.send in[0][108]
      coll.recv -> out[0][236]
      coll.send in[0][109]
      coll.recv -> out[0][237]
      coll.send in[0][110]
      coll.recv -> out[0][238]
      coll.send in[0][111]
      coll.recv -> out[0][239]
      coll.send in[0][112]
      coll.recv -> out[0][240]
      coll.send in[0][113]
      coll.recv -> out[0][241]
      coll.send in[0][114]
      coll.recv -> out[0][242]
      coll.send in[0][115]
      coll.recv -> out[0][243]
      coll.send in[0][116]
      coll.recv -> out[0][244]
      coll.send in[0][117]
      coll.recv -> out[0][245]
      coll.send in[0][118]
      coll.recv -> out[0][246]
      coll.send in[0][119]
      coll.recv -> out[0][247]
      coll.send in[0][120]
      coll.recv -> out[0][248]
      coll.send in[0][121]
      coll.recv -> out[0][249]
      coll.send in[0][122]
      coll.recv -> out[0][250]
      coll.send in[0][123]
      coll.recv -> out[0][251]
      coll.send in[0][124]
      coll.recv -> out[0][252]
      coll.send in[0][125]
      coll.recv -> out[0][253]
      coll.send in[0][126]
      coll.recv -> out[0][254]
      coll.send in[0][127]
      coll.recv -> out[0][255]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0:128] -> out[0][0:128]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
      coll.send in[1][1]
      coll.recv -> out[1][1]
      coll.send in[1][2]
      coll.recv -> out[1][2]
      coll.send in[1][3]
      coll.recv -> out[1][3]
      coll.send in[1][4]
      coll.recv -> out[1][4]
      coll.send in[1][5]
      coll.recv -> out[1][5]
      coll.send in[1][6]
      coll.recv -> out[1][6]
      coll.send in[1][7]
      coll.recv -> out[1][7]
      coll.send in[1][8]
      coll.recv -> out[1][8]
      coll.send in[1][9]
      coll.recv -> out[1][9]
      coll.send in[1][10]
      coll.recv -> out[1][10]
      coll.send in[1][11]
      coll.recv -> out[1][11]
      coll.send in[1][12]
      coll.recv -> out[1][12]
      coll.send in[1][13]
      coll.recv -> out[1][13]
      coll.send in[1][14]
      coll.recv -> out[1][14]
      coll.send in[1][15]
      coll.recv -> out[1][15]
      coll.send in[1][16]
      coll.recv -> out[1][16]
      coll.send in[1][17]
      coll.recv -> out[1][17]
      coll.send in[1][18]
      coll.recv -> out[1][18]
      coll.send in[1][19]
      coll.recv -> out[1][19]
      coll.send in[1][20]
      coll.recv -> out[1][20]
      coll.send in[1][21]
      coll.recv -> out[1][21]
      coll.send in[1][22]
      coll.recv -> out[1][22]
      coll.send in[1][23]
      coll.recv -> out[1][23]
      coll.send in[1][24]
      coll.recv -> out[1][24]
      coll.send in[1][25]
      coll.recv -> out[1][25]
      coll.send in[1][26]
      coll.recv -> out[1][26]
      coll.send in[1][27]
      coll.recv -> out[1][27]
      coll.send in[1][28]
      coll.recv -> out[1][28]
      coll.send in[1][29]
      coll.recv -> out[1][29]
      coll.send in[1][30]
      coll.recv -> out[1][30]
      coll.send in[1][31]
      coll.recv -> out[1][31]
      coll.send in[1][32]
      coll.recv -> out[1][32]
      coll.send in[1][33]
      coll.recv -> out[1][33]
      coll.send in[1][34]
      coll.recv -> out[1][34]
      coll.send in[1][35]
      coll.recv -> out[1][35]
      coll.send in[1][36]
      coll.recv -> out[1][36]
      coll.send in[1][37]
      coll.recv -> out[1][37]
      coll.send in[1][38]
      coll.recv -> out[1][38]
      coll.send in[1][39]
      coll.recv -> out[1][39]
      coll.send in[1][40]
      coll.recv -> out[1][40]
      coll.send in[1][41]
      coll.recv -> out[1][41]
      coll.send in[1][42]
      coll.recv -> out[1][42]
      coll.send in[1][43]
      coll.recv -> out[1][43]
      coll.send in[1][44]
      coll.recv -> out[1][44]
      coll.send in[1][45]
      coll.recv -> out[1][45]
      coll.send in[1][46]
      coll.recv -> out[1][46]
      coll.send in[1][47]
      coll.recv -> out[1][47]
      coll.send in[1][48]
      coll.recv -> out[1][48]
      coll.send in[1][49]
      coll.recv -> out[1][49]
      coll.send in[1][50]
      coll.recv -> out[1][50]
      coll.send in[1][51]
      coll.recv -> out[1][51]
      coll.send in[1][52]
      coll.recv -> out[1][52]
      coll.send in[1][53]
      coll.recv -> out[1][53]
      coll.send in[1][54]
      coll.recv -> out[1][54]
      coll.send in[1][55]
      coll.recv -> out[1][55]
      coll.send in[1][56]
      coll.recv -> out[1][56]
      coll.send in[1][57]
      coll.recv -> out[1][57]
      coll.send in[1][58]
      coll.recv -> out[1][58]
      coll.send in[1][59]
      coll.recv -> out[1][59]
      coll.send in[1][60]
      coll.recv -> out[1][60]
      coll.send in[1][61]
      coll.recv -> out[1][61]
      coll.send in[1][62]
      coll.recv -> out[1][62]
      coll.send in[1][63]
      coll.recv -> out[1][63]
      coll.send in[1][64]
      coll.recv -> out[1][64]
      coll.send in[1][65]
      coll.recv -> out[1][65]
      coll.send in[1][66]
      coll.recv -> out[1][66]
      coll.send in[1][67]
      coll.recv -> out[1][67]
      coll.send in[1][68]
      coll.recv -> out[1][68]
      coll.send in[1][69]
      coll.recv -> out[1][69]
      coll.send in[1][70]
      coll.recv -> out[1][70]
      coll.send in[1][71]
      coll.recv -> out[1][71]
      coll.send in[1][72]
      coll.recv -> out[1][72]
      coll.send in[1][73]
      coll.recv -> out[1][73]
      coll.send in[1][74]
      coll.recv -> out[1][74]
      coll.send in[1][75]
      coll.recv -> out[1][75]
      coll.send in[1][76]
      coll.recv -> out[1][76]
      coll.send in[1][77]
      coll.recv -> out[1][77]
      coll.send in[1][78]
      coll.recv -> out[1][78]
      coll.send in[1][79]
      coll.recv -> out[1][79]
      coll.send in[1][80]
      coll.recv -> out[1][80]
      coll.send in[1][81]
      coll.recv -> out[1][81]
      coll.send in[1][82]
      coll.recv -> out[1][82]
      coll.send in[1][83]
      coll.recv -> out[1][83]
      coll.send in[1][84]
      coll.recv -> out[1][84]
      coll.send in[1][85]
      coll.recv -> out[1][85]
      coll.send in[1][86]
      coll.recv -> out[1][86]
      coll.send in[1][87]
      coll.recv -> out[1][87]
      coll.send in[1][88]
      coll.recv -> out[1][88]
      coll.send in[1][89]
      coll.recv -> out[1][89]
      coll.send in[1][90]
      coll.recv -> out[1][90]
      coll.send in[1][91]
      coll.recv -> out[1][91]
      coll.send in[1][92]
      coll.recv -> out[1][92]
      coll.send in[1][93]
      coll.recv -> out[1][93]
      coll.send in[1][94]
      coll.recv -> out[1][94]
      coll.send in[1][95]
      coll.recv -> out[1][95]
      coll.send in[1][96]
      coll.recv -> out[1][96]
      coll.send in[1][97]
      coll.recv -> out[1][97]
      coll.send in[1][98]
      coll.recv -> out[1][98]
      coll.send in[1][99]
      coll.recv -> out[1][99]
      coll.send in[1][100]
      coll.recv -> out[1][100]
      coll.send in[1][101]
      coll.recv -> out[1][101]
      coll.send in[1][102]
      coll.recv -> out[1][102]
      coll.send in[1][103]
      coll.recv -> out[1][103]
      coll.send in[1][104]
      coll.recv -> out[1][104]
      coll.send in[1][105]
      coll.recv -> out[1][105]
      coll.send in[1][106]
      coll.recv -> out[1][106]
      coll.send in[1][107]
      coll.recv -> out[1][107]
      coll.send in[1][108]
      coll.recv -> out[1][108]
      coll.send in[1][109]
      coll.recv -> out[1][109]
      coll.send in[1][110]
      coll.recv -> out[1][110]
      coll.send in[1][111]
      coll.recv -> out[1][111]
      coll.send in[1][112]
      coll.recv -> out[1][112]
      coll.send in[1][113]
      coll.recv -> out[1][113]
      coll.send in[1][114]
      coll.recv -> out[1][114]
      coll.send in[1][115]
      coll.recv -> out[1][115]
      coll.send in[1][116]
      coll.recv -> out[1][116]
      coll.send in[1][117]
      coll.recv -> out[1][117]
      coll.send in[1][118]
      coll.recv -> out[1][118]
      coll.send in[1][119]
      coll.recv -> out[1][119]
      coll.send in[1][120]
      coll.recv -> out[1][120]
      coll.send in[1][121]
      coll.recv -> out[1][121]
      coll.send in[1][122]
      coll.recv -> out[1][122]
      coll.send in[1][123]
      coll.recv -> out[1][123]
      coll.send in[1][124]
      coll.recv -> out[1][124]
      coll.send in[1][125]
      coll.recv -> out[1][125]
      coll.send in[1][126]
      coll.recv -> out[1][126]
      coll.send in[1][127]
      coll.recv -> out[1][127]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0:128] -> out[1][128:256]
    }
  }
}

// -----

// 257 steps in a threadblock.
coll.plan @steps257 : allgather ranks(2) chunks(128) {
  coll.rank 0 {
    // expected-error@+1 {{rank 0, threadblock 0 has 257 steps; the MSCCL runtime allows 256}}
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      coll.recv -> out[0][128]
      coll.send in[0][1]
      coll.recv -> out[0][129]
      coll.send in[0][2]
      coll.recv -> out[0][130]
      coll.send in[0][3]
      coll.recv -> out[0][131]
      coll.send in[0][4]
      coll.recv -> out[0][132]
      coll.send in[0][5]
      coll.recv -> out[0][133]
      coll.send in[0][6]
      coll.recv -> out[0][134]
      coll.send in[0][7]
      coll.recv -> out[0][135]
      coll.send in[0][8]
      coll.recv -> out[0][136]
      coll.send in[0][9]
      coll.recv -> out[0][137]
      coll.send in[0][10]
      coll.recv -> out[0][138]
      coll.send in[0][11]
      coll.recv -> out[0][139]
      coll.send in[0][12]
      coll.recv -> out[0][140]
      coll.send in[0][13]
      coll.recv -> out[0][141]
      coll.send in[0][14]
      coll.recv -> out[0][142]
      coll.send in[0][15]
      coll.recv -> out[0][143]
      coll.send in[0][16]
      coll.recv -> out[0][144]
      coll.send in[0][17]
      coll.recv -> out[0][145]
      coll.send in[0][18]
      coll.recv -> out[0][146]
      coll.send in[0][19]
      coll.recv -> out[0][147]
      coll.send in[0][20]
      coll.recv -> out[0][148]
      coll.send in[0][21]
      coll.recv -> out[0][149]
      coll.send in[0][22]
      coll.recv -> out[0][150]
      coll.send in[0][23]
      coll.recv -> out[0][151]
      coll.send in[0][24]
      coll.recv -> out[0][152]
      coll.send in[0][25]
      coll.recv -> out[0][153]
      coll.send in[0][26]
      coll.recv -> out[0][154]
      coll.send in[0][27]
      coll.recv -> out[0][155]
      coll.send in[0][28]
      coll.recv -> out[0][156]
      coll.send in[0][29]
      coll.recv -> out[0][157]
      coll.send in[0][30]
      coll.recv -> out[0][158]
      coll.send in[0][31]
      coll.recv -> out[0][159]
      coll.send in[0][32]
      coll.recv -> out[0][160]
      coll.send in[0][33]
      coll.recv -> out[0][161]
      coll.send in[0][34]
      coll.recv -> out[0][162]
      coll.send in[0][35]
      coll.recv -> out[0][163]
      coll.send in[0][36]
      coll.recv -> out[0][164]
      coll.send in[0][37]
      coll.recv -> out[0][165]
      coll.send in[0][38]
      coll.recv -> out[0][166]
      coll.send in[0][39]
      coll.recv -> out[0][167]
      coll.send in[0][40]
      coll.recv -> out[0][168]
      coll.send in[0][41]
      coll.recv -> out[0][169]
      coll.send in[0][42]
      coll.recv -> out[0][170]
      coll.send in[0][43]
      coll.recv -> out[0][171]
      coll.send in[0][44]
      coll.recv -> out[0][172]
      coll.send in[0][45]
      coll.recv -> out[0][173]
      coll.send in[0][46]
      coll.recv -> out[0][174]
      coll.send in[0][47]
      coll.recv -> out[0][175]
      coll.send in[0][48]
      coll.recv -> out[0][176]
      coll.send in[0][49]
      coll.recv -> out[0][177]
      coll.send in[0][50]
      coll.recv -> out[0][178]
      coll.send in[0][51]
      coll.recv -> out[0][179]
      coll.send in[0][52]
      coll.recv -> out[0][180]
      coll.send in[0][53]
      coll.recv -> out[0][181]
      coll.send in[0][54]
      coll.recv -> out[0][182]
      coll.send in[0][55]
      coll.recv -> out[0][183]
      coll.send in[0][56]
      coll.recv -> out[0][184]
      coll.send in[0][57]
      coll.recv -> out[0][185]
      coll.send in[0][58]
      coll.recv -> out[0][186]
      coll.send in[0][59]
      coll.recv -> out[0][187]
      coll.send in[0][60]
      coll.recv -> out[0][188]
      coll.send in[0][61]
      coll.recv -> out[0][189]
      coll.send in[0][62]
      coll.recv -> out[0][190]
      coll.send in[0][63]
      coll.recv -> out[0][191]
      coll.send in[0][64]
      coll.recv -> out[0][192]
      coll.send in[0][65]
      coll.recv -> out[0][193]
      coll.send in[0][66]
      coll.recv -> out[0][194]
      coll.send in[0][67]
      coll.recv -> out[0][195]
      coll.send in[0][68]
      coll.recv -> out[0][196]
      coll.send in[0][69]
      coll.recv -> out[0][197]
      coll.send in[0][70]
      coll.recv -> out[0][198]
      coll.send in[0][71]
      coll.recv -> out[0][199]
      coll.send in[0][72]
      coll.recv -> out[0][200]
      coll.send in[0][73]
      coll.recv -> out[0][201]
      coll.send in[0][74]
      coll.recv -> out[0][202]
      coll.send in[0][75]
      coll.recv -> out[0][203]
      coll.send in[0][76]
      coll.recv -> out[0][204]
      coll.send in[0][77]
      coll.recv -> out[0][205]
      coll.send in[0][78]
      coll.recv -> out[0][206]
      coll.send in[0][79]
      coll.recv -> out[0][207]
      coll.send in[0][80]
      coll.recv -> out[0][208]
      coll.send in[0][81]
      coll.recv -> out[0][209]
      coll.send in[0][82]
      coll.recv -> out[0][210]
      coll.send in[0][83]
      coll.recv -> out[0][211]
      coll.send in[0][84]
      coll.recv -> out[0][212]
      coll.send in[0][85]
      coll.recv -> out[0][213]
      coll.send in[0][86]
      coll.recv -> out[0][214]
      coll.send in[0][87]
      coll.recv -> out[0][215]
      coll.send in[0][88]
      coll.recv -> out[0][216]
      coll.send in[0][89]
      coll.recv -> out[0][217]
      coll.send in[0][90]
      coll.recv -> out[0][218]
      coll.send in[0][91]
      coll.recv -> out[0][219]
      coll.send in[0][92]
      coll.recv -> out[0][220]
      coll.send in[0][93]
      coll.recv -> out[0][221]
      coll.send in[0][94]
      coll.recv -> out[0][222]
      coll.send in[0][95]
      coll.recv -> out[0][223]
      coll.send in[0][96]
      coll.recv -> out[0][224]
      coll.send in[0][97]
      coll.recv -> out[0][225]
      coll.send in[0][98]
      coll.recv -> out[0][226]
      coll.send in[0][99]
      coll.recv -> out[0][227]
      coll.send in[0][100]
      coll.recv -> out[0][228]
      coll.send in[0][101]
      coll.recv -> out[0][229]
      coll.send in[0][102]
      coll.recv -> out[0][230]
      coll.send in[0][103]
      coll.recv -> out[0][231]
      coll.send in[0][104]
      coll.recv -> out[0][232]
      coll.send in[0][105]
      coll.recv -> out[0][233]
      coll.send in[0][106]
      coll.recv -> out[0][234]
      coll.send in[0][107]
      coll.recv -> out[0][235]
      coll.send in[0][108]
      coll.recv -> out[0][236]
      coll.send in[0][109]
      coll.recv -> out[0][237]
      coll.send in[0][110]
      coll.recv -> out[0][238]
      coll.send in[0][111]
      coll.recv -> out[0][239]
      coll.send in[0][112]
      coll.recv -> out[0][240]
      coll.send in[0][113]
      coll.recv -> out[0][241]
      coll.send in[0][114]
      coll.recv -> out[0][242]
      coll.send in[0][115]
      coll.recv -> out[0][243]
      coll.send in[0][116]
      coll.recv -> out[0][244]
      coll.send in[0][117]
      coll.recv -> out[0][245]
      coll.send in[0][118]
      coll.recv -> out[0][246]
      coll.send in[0][119]
      coll.recv -> out[0][247]
      coll.send in[0][120]
      coll.recv -> out[0][248]
      coll.send in[0][121]
      coll.recv -> out[0][249]
      coll.send in[0][122]
      coll.recv -> out[0][250]
      coll.send in[0][123]
      coll.recv -> out[0][251]
      coll.send in[0][124]
      coll.recv -> out[0][252]
      coll.send in[0][125]
      coll.recv -> out[0][253]
      coll.send in[0][126]
      coll.recv -> out[0][254]
      coll.send in[0][127]
      coll.recv -> out[0][255]
      coll.local_copy in[0][0] -> out[0][0] deps(1:0)
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0:128] -> out[0][0:128]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
      coll.send in[1][1]
      coll.recv -> out[1][1]
      coll.send in[1][2]
      coll.recv -> out[1][2]
      coll.send in[1][3]
      coll.recv -> out[1][3]
      coll.send in[1][4]
      coll.recv -> out[1][4]
      coll.send in[1][5]
      coll.recv -> out[1][5]
      coll.send in[1][6]
      coll.recv -> out[1][6]
      coll.send in[1][7]
      coll.recv -> out[1][7]
      coll.send in[1][8]
      coll.recv -> out[1][8]
      coll.send in[1][9]
      coll.recv -> out[1][9]
      coll.send in[1][10]
      coll.recv -> out[1][10]
      coll.send in[1][11]
      coll.recv -> out[1][11]
      coll.send in[1][12]
      coll.recv -> out[1][12]
      coll.send in[1][13]
      coll.recv -> out[1][13]
      coll.send in[1][14]
      coll.recv -> out[1][14]
      coll.send in[1][15]
      coll.recv -> out[1][15]
      coll.send in[1][16]
      coll.recv -> out[1][16]
      coll.send in[1][17]
      coll.recv -> out[1][17]
      coll.send in[1][18]
      coll.recv -> out[1][18]
      coll.send in[1][19]
      coll.recv -> out[1][19]
      coll.send in[1][20]
      coll.recv -> out[1][20]
      coll.send in[1][21]
      coll.recv -> out[1][21]
      coll.send in[1][22]
      coll.recv -> out[1][22]
      coll.send in[1][23]
      coll.recv -> out[1][23]
      coll.send in[1][24]
      coll.recv -> out[1][24]
      coll.send in[1][25]
      coll.recv -> out[1][25]
      coll.send in[1][26]
      coll.recv -> out[1][26]
      coll.send in[1][27]
      coll.recv -> out[1][27]
      coll.send in[1][28]
      coll.recv -> out[1][28]
      coll.send in[1][29]
      coll.recv -> out[1][29]
      coll.send in[1][30]
      coll.recv -> out[1][30]
      coll.send in[1][31]
      coll.recv -> out[1][31]
      coll.send in[1][32]
      coll.recv -> out[1][32]
      coll.send in[1][33]
      coll.recv -> out[1][33]
      coll.send in[1][34]
      coll.recv -> out[1][34]
      coll.send in[1][35]
      coll.recv -> out[1][35]
      coll.send in[1][36]
      coll.recv -> out[1][36]
      coll.send in[1][37]
      coll.recv -> out[1][37]
      coll.send in[1][38]
      coll.recv -> out[1][38]
      coll.send in[1][39]
      coll.recv -> out[1][39]
      coll.send in[1][40]
      coll.recv -> out[1][40]
      coll.send in[1][41]
      coll.recv -> out[1][41]
      coll.send in[1][42]
      coll.recv -> out[1][42]
      coll.send in[1][43]
      coll.recv -> out[1][43]
      coll.send in[1][44]
      coll.recv -> out[1][44]
      coll.send in[1][45]
      coll.recv -> out[1][45]
      coll.send in[1][46]
      coll.recv -> out[1][46]
      coll.send in[1][47]
      coll.recv -> out[1][47]
      coll.send in[1][48]
      coll.recv -> out[1][48]
      coll.send in[1][49]
      coll.recv -> out[1][49]
      coll.send in[1][50]
      coll.recv -> out[1][50]
      coll.send in[1][51]
      coll.recv -> out[1][51]
      coll.send in[1][52]
      coll.recv -> out[1][52]
      coll.send in[1][53]
      coll.recv -> out[1][53]
      coll.send in[1][54]
      coll.recv -> out[1][54]
      coll.send in[1][55]
      coll.recv -> out[1][55]
      coll.send in[1][56]
      coll.recv -> out[1][56]
      coll.send in[1][57]
      coll.recv -> out[1][57]
      coll.send in[1][58]
      coll.recv -> out[1][58]
      coll.send in[1][59]
      coll.recv -> out[1][59]
      coll.send in[1][60]
      coll.recv -> out[1][60]
      coll.send in[1][61]
      coll.recv -> out[1][61]
      coll.send in[1][62]
      coll.recv -> out[1][62]
      coll.send in[1][63]
      coll.recv -> out[1][63]
      coll.send in[1][64]
      coll.recv -> out[1][64]
      coll.send in[1][65]
      coll.recv -> out[1][65]
      coll.send in[1][66]
      coll.recv -> out[1][66]
      coll.send in[1][67]
      coll.recv -> out[1][67]
      coll.send in[1][68]
      coll.recv -> out[1][68]
      coll.send in[1][69]
      coll.recv -> out[1][69]
      coll.send in[1][70]
      coll.recv -> out[1][70]
      coll.send in[1][71]
      coll.recv -> out[1][71]
      coll.send in[1][72]
      coll.recv -> out[1][72]
      coll.send in[1][73]
      coll.recv -> out[1][73]
      coll.send in[1][74]
      coll.recv -> out[1][74]
      coll.send in[1][75]
      coll.recv -> out[1][75]
      coll.send in[1][76]
      coll.recv -> out[1][76]
      coll.send in[1][77]
      coll.recv -> out[1][77]
      coll.send in[1][78]
      coll.recv -> out[1][78]
      coll.send in[1][79]
      coll.recv -> out[1][79]
      coll.send in[1][80]
      coll.recv -> out[1][80]
      coll.send in[1][81]
      coll.recv -> out[1][81]
      coll.send in[1][82]
      coll.recv -> out[1][82]
      coll.send in[1][83]
      coll.recv -> out[1][83]
      coll.send in[1][84]
      coll.recv -> out[1][84]
      coll.send in[1][85]
      coll.recv -> out[1][85]
      coll.send in[1][86]
      coll.recv -> out[1][86]
      coll.send in[1][87]
      coll.recv -> out[1][87]
      coll.send in[1][88]
      coll.recv -> out[1][88]
      coll.send in[1][89]
      coll.recv -> out[1][89]
      coll.send in[1][90]
      coll.recv -> out[1][90]
      coll.send in[1][91]
      coll.recv -> out[1][91]
      coll.send in[1][92]
      coll.recv -> out[1][92]
      coll.send in[1][93]
      coll.recv -> out[1][93]
      coll.send in[1][94]
      coll.recv -> out[1][94]
      coll.send in[1][95]
      coll.recv -> out[1][95]
      coll.send in[1][96]
      coll.recv -> out[1][96]
      coll.send in[1][97]
      coll.recv -> out[1][97]
      coll.send in[1][98]
      coll.recv -> out[1][98]
      coll.send in[1][99]
      coll.recv -> out[1][99]
      coll.send in[1][100]
      coll.recv -> out[1][100]
      coll.send in[1][101]
      coll.recv -> out[1][101]
      coll.send in[1][102]
      coll.recv -> out[1][102]
      coll.send in[1][103]
      coll.recv -> out[1][103]
      coll.send in[1][104]
      coll.recv -> out[1][104]
      coll.send in[1][105]
      coll.recv -> out[1][105]
      coll.send in[1][106]
      coll.recv -> out[1][106]
      coll.send in[1][107]
      coll.recv -> out[1][107]
      coll.send in[1][108]
      coll.recv -> out[1][108]
      coll.send in[1][109]
      coll.recv -> out[1][109]
      coll.send in[1][110]
      coll.recv -> out[1][110]
      coll.send in[1][111]
      coll.recv -> out[1][111]
      coll.send in[1][112]
      coll.recv -> out[1][112]
      coll.send in[1][113]
      coll.recv -> out[1][113]
      coll.send in[1][114]
      coll.recv -> out[1][114]
      coll.send in[1][115]
      coll.recv -> out[1][115]
      coll.send in[1][116]
      coll.recv -> out[1][116]
      coll.send in[1][117]
      coll.recv -> out[1][117]
      coll.send in[1][118]
      coll.recv -> out[1][118]
      coll.send in[1][119]
      coll.recv -> out[1][119]
      coll.send in[1][120]
      coll.recv -> out[1][120]
      coll.send in[1][121]
      coll.recv -> out[1][121]
      coll.send in[1][122]
      coll.recv -> out[1][122]
      coll.send in[1][123]
      coll.recv -> out[1][123]
      coll.send in[1][124]
      coll.recv -> out[1][124]
      coll.send in[1][125]
      coll.recv -> out[1][125]
      coll.send in[1][126]
      coll.recv -> out[1][126]
      coll.send in[1][127]
      coll.recv -> out[1][127]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0:128] -> out[1][128:256]
    }
  }
}
